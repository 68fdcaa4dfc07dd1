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
        // The multiply leaves the low bits (the table index) weakly mixed.
        self.0.rotate_left(26)
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
}
