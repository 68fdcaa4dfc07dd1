//! The module's heap, counted and bounded.
//!
//! A wasm instance has one heap of at most 4 GiB that never shrinks, and an
//! allocation it cannot serve aborts the instance (a trap: every runtime in
//! it is lost). The per-value and per-queue limits bound each input; this
//! bounds their sum. [`Counting`] wraps the global allocator and keeps the
//! bytes live. Everything that brings data in asks first and is refused
//! `LIMIT_EXCEEDED` (naming `heapBytes`) once the live bytes would pass the
//! limit: prompts and messages where they enter a tree ([`admit`]), and every
//! copy of JS data in the bridge, a host's answer or a store's read included
//! (its turn or read then fails with that error, and the runtime answers).
//! What the runtime does of its own (a settlement, its appends, its
//! bookkeeping) is never refused: it finishes in the headroom between the
//! limit (at most 3 GiB) and the 4 GiB the instance can grow to. One limit
//! per instance: the heap is shared by every runtime and store in it.
//!
//! Without [`Counting`] as the global allocator (native builds unless a
//! program installs it) nothing is counted and nothing is refused.

use crate::core::error::Result;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The default `heapBytes`: half of what a wasm32 instance can address.
pub const DEFAULT_HEAP_BYTES: usize = 2 << 30;
/// The lowest `heapBytes` may be set to.
pub const MIN_HEAP_BYTES: usize = 16 << 20;
/// The highest: a gigabyte of headroom stays for work already admitted.
pub const MAX_HEAP_BYTES: usize = 3 << 30;

static USED: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_HEAP_BYTES);
/// A lower ceiling for one conversion ([`within`]): what it may hold in all.
static CEILING: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Whether that ceiling, not the limit, refused a copy.
static CEILING_HIT: AtomicBool = AtomicBool::new(false);

/// A global allocator that counts the bytes `A` holds for the program.
pub struct Counting<A>(pub A);

// SAFETY: every call is forwarded to `A` unchanged; the count is bookkeeping.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            USED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            USED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        USED.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            USED.fetch_add(new_size, Relaxed);
            USED.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

/// Bytes the program holds now (0 when [`Counting`] is not installed).
pub fn used() -> usize {
    USED.load(Relaxed)
}

/// The current `heapBytes`.
pub fn limit() -> usize {
    LIMIT.load(Relaxed)
}

/// Sets `heapBytes` (from [`MIN_HEAP_BYTES`] to [`MAX_HEAP_BYTES`]); a limit
/// below what is held now refuses new input until enough is freed.
pub fn set_limit(bytes: usize) -> Result<()> {
    if !(MIN_HEAP_BYTES..=MAX_HEAP_BYTES).contains(&bytes) {
        return Err(crate::err!(
            InvalidArgument,
            "heapBytes must be from {MIN_HEAP_BYTES} to {MAX_HEAP_BYTES}, not {bytes}"
        ));
    }
    LIMIT.store(bytes, Relaxed);
    Ok(())
}

/// Bytes that may still be admitted (or copied, under a [`within`] ceiling).
pub fn room() -> usize {
    limit().min(CEILING.load(Relaxed)).saturating_sub(used())
}

/// Whether a copy of `bytes` more fits the limit and any [`within`] ceiling
/// (noting which refused it).
pub fn fits(bytes: usize) -> bool {
    let wanted = used().saturating_add(bytes);
    if wanted <= limit().min(CEILING.load(Relaxed)) {
        return true;
    }
    if wanted <= limit() {
        CEILING_HIT.store(true, Relaxed);
    }
    false
}

/// Runs `f` (a conversion) allowed to hold at most `bytes` more than now,
/// where the data is bound for a place with that much room (a `MemoryStore`
/// near its `maxBytes`), so it is refused before it is copied whole. Answers
/// `f`'s outcome and whether that ceiling (not `heapBytes`) refused a copy.
pub fn within<T>(bytes: usize, f: impl FnOnce() -> T) -> (T, bool) {
    let previous = CEILING.swap(used().saturating_add(bytes), Relaxed);
    CEILING_HIT.store(false, Relaxed);
    let out = f();
    let hit = CEILING_HIT.swap(false, Relaxed);
    CEILING.store(previous, Relaxed);
    (out, hit)
}

/// The end of a refusal's sentence: `needs N bytes of a heap that holds M
/// bytes; the limit heapBytes is L`.
pub fn over(bytes: usize) -> String {
    format!("needs {bytes} bytes of a heap that holds {} bytes; the limit heapBytes is {}", used(), limit())
}

/// Whether `bytes` more of `what` fit under the limit: `LIMIT_EXCEEDED` naming
/// `heapBytes` when they do not.
pub fn admit(what: &str, bytes: usize) -> Result<()> {
    if used().saturating_add(bytes) > limit() {
        return Err(crate::err!(LimitExceeded, "{what} {}", over(bytes)));
    }
    Ok(())
}
