//! bytepair's core: Byte-Pair Encoding training and encoding.
//!
//! One module per stage: `pretokenize` (special tokens, pattern split), `train` (word counts → merges),
//! `encode` (merges applied to pieces), `vocab` (tokens and ids), `formats` (files), `tokenizer` (the
//! pipeline). `python` holds the PyO3 bindings only.

pub mod encode;
pub mod error;
pub mod formats;
pub mod pretokenize;
pub mod progress;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(feature = "python")]
mod python;

/// Asks the CPU to start loading `item` into cache (no-op where there is no prefetch instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults and has no visible effect but timing.
    unsafe {
        std::arch::x86_64::_mm_prefetch(item as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// How many threads a request for `requested` gets: 0 stays 0 (the caller's default: every core, or
/// `RAYON_NUM_THREADS`), and no more than the machine's cores (this work is all computation: more threads only
/// compete for the same cores, and each costs a stack and its caches — 10 000 of them took 87 s and 1.6 GB to
/// count a 23-byte file).
pub fn at_most_cores(requested: usize) -> usize {
    requested.min(cores())
}

/// The cores this process may use, found once (`available_parallelism` reads cgroup files on Linux: tens of
/// microseconds, which a loop of small batches would pay on every call).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// mimalloc for the core's own allocations: training makes millions of small ones (per-pair occurrence
/// lists, per-item words), and glibc's malloc/free took ~15% of the merge loop (perf); with mimalloc,
/// training 110 MB @ 32k is ~20% faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Returns the memory the calling thread's allocator heap holds but no longer uses to the OS. Counting calls
/// it on its threads when it is done: otherwise ~70 MB of dead per-thread counting tables stay resident
/// through training (peak RSS 207 MB vs ~170 MB on Gutenberg 110 MB @ 32k). Purging more eagerly all the time
/// (mimalloc's purge delay 0-200 ms) costs 20-30% of the speed in page faults instead.
pub fn release_freed_memory() {
    // SAFETY: asks mimalloc to collect this thread's heap; no pointers are involved.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
