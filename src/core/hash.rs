//! `HashMap` and `HashSet` with a small multiply-rotate hasher (FxHash, as in
//! rustc) instead of std's SipHash: every hash site inlines the hasher, and
//! SipHash's rounds cost several KB of wasm over the crate's maps. The keys
//! are session ids and names; iteration order was never part of any output
//! (the sites that need an order sort).
use std::hash::{BuildHasherDefault, Hasher};

pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;
pub(crate) type HashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FxHasher>>;

const K: u64 = 0xf135_7aea_2e62_a9c5;

#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = self.0.wrapping_add(word).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // A multiply spreads a difference only upwards, so keys that differ
        // in their last bytes (`agent-1` ... `agent-2000`, `r-s1` ...) would
        // share the bits hashbrown takes its index and its tag from, and
        // every probe would compare strings. murmur3's finalizer mixes every
        // bit into every other.
        let mut z = self.0;
        z ^= z >> 33;
        z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
        z ^= z >> 33;
        z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::HashSet;

    #[test]
    fn distinct_keys_stay_distinct() {
        let keys: Vec<String> = (0..5000).map(|i| format!("agent-{i}")).collect();
        let set: HashSet<&str> = keys.iter().map(String::as_str).collect();
        assert_eq!(set.len(), keys.len());
        assert!(keys.iter().all(|k| set.contains(k.as_str())));
        assert!(!set.contains("agent-5000") && !set.contains(""));
    }

    /// Keys that differ only in their last bytes still differ in the top
    /// seven bits (hashbrown's tag) and in the low bits (its index).
    #[test]
    fn a_difference_in_the_last_bytes_reaches_the_tag_and_the_index() {
        use std::hash::BuildHasher;
        let build = std::hash::BuildHasherDefault::<super::FxHasher>::default();
        let hashes: Vec<u64> = (0..2000).map(|i| build.hash_one(format!("r-s{i}"))).collect();
        let tags: std::collections::BTreeSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        let low: std::collections::BTreeSet<u64> = hashes.iter().map(|h| h & 0x3ff).collect();
        assert!(tags.len() > 100, "{} distinct tags", tags.len());
        assert!(low.len() > 600, "{} distinct low bits", low.len());
    }
}
