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

/// Runs `work` (which uses rayon's parallel iterators) on this process's own pool. Not on rayon's global pool:
/// after `fork` a child has none of its parent's threads, and a global pool made before the fork waits for
/// them forever (a `multiprocessing` pool with the fork start method hung on unpickling its first tokenizer). A
/// child makes a pool of its own on first use; the parent's is left alone (its threads are not the child's).
pub fn on_own_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    match own_pool() {
        Some(pool) => pool.install(work),
        None => work(), // could not start threads: rayon's global pool, as before
    }
}

/// This process's pool for `on_own_pool` (None if its threads cannot be started).
pub fn own_pool() -> Option<std::sync::Arc<rayon::ThreadPool>> {
    static POOL: std::sync::Mutex<Option<(u32, std::sync::Arc<rayon::ThreadPool>)>> = std::sync::Mutex::new(None);
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, pool)) = slot.as_ref()
        && *owner == pid
    {
        return Some(pool.clone());
    }
    if let Some((_, parents)) = slot.take() {
        // We are a forked child and this is the parent's pool: dropping it would signal threads that do not
        // exist here.
        std::mem::forget(parents);
    }
    let pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("bytepair-{i}")).build().ok()?;
    let pool = std::sync::Arc::new(pool);
    *slot = Some((pid, pool.clone()));
    Some(pool)
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
