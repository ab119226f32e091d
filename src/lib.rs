//! bytepair's core: Byte-Pair Encoding training and encoding.
//!
//! One module per stage: `pretokenize` (special tokens, pattern split), `train` (word counts → merges),
//! `encode` (merges applied to pieces), `vocab` (tokens and ids), `formats` (files, one module per format),
//! `tokenizer` (the pipeline), `id_room` (the vector a long text's ids are written into), `utf8` (Python's str
//! storage as UTF-8). `bindings` holds the PyO3 bindings only, one file per Python class.

pub mod cpu;
pub mod cutting;
pub mod encode;
pub mod error;
pub mod formats;
pub mod id_room;
pub mod pretokenize;
pub mod progress;
pub mod tokenizer;
pub mod train;
pub mod utf8;
pub mod vocab;

#[cfg(feature = "python")]
mod bindings;

/// Asks the CPU to start loading `item` into cache (no-op where there is no prefetch instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    prefetch_ptr(item as *const T);
}

/// `prefetch` by address: for memory another thread may be writing, to which no reference may be made.
#[inline(always)]
pub(crate) fn prefetch_ptr<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults (whatever the address) and has no visible effect but timing.
    unsafe {
        std::arch::x86_64::_mm_prefetch(at as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Asks for the `bytes` bytes from `start` into this core's second-level cache, a line at a time in address
/// order (a hint: nothing is read, nothing can fault).
pub(crate) fn prefetch_lines(start: *const u8, bytes: usize) {
    for at in (0..bytes).step_by(64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint; it never faults (whatever the address) and has no visible effect but
        // timing. `wrapping_add`: the address is only computed, never dereferenced here.
        unsafe {
            std::arch::x86_64::_mm_prefetch(start.wrapping_add(at) as *const i8, std::arch::x86_64::_MM_HINT_T1);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (start, at);
    }
}

/// How this library was compiled: "pgo:" and the workload's name when with profile-guided optimisation
/// (`tools/pgo.py`, which `make build` runs, sets `BYTEPAIR_BUILD_PROFILE`), else "release" or "debug". For the
/// benchmarks' reports: a PGO build encodes a few per cent faster.
pub fn build_profile() -> &'static str {
    match option_env!("BYTEPAIR_BUILD_PROFILE") {
        Some(profile) => profile,
        None if cfg!(debug_assertions) => "debug",
        None => "release",
    }
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

/// Runs `work` (which uses rayon's parallel iterators) on this process's default pool (`thread_pool(0)`), not
/// on rayon's global pool: after `fork` a child has none of its parent's threads, and a global pool made before
/// the fork waits for them forever (a `multiprocessing` pool with the fork start method hung on unpickling its
/// first tokenizer).
///
/// Called on a thread of some rayon pool (a caller's parallel loop whose first encode builds the tokenizer's
/// tables in a `OnceLock`), `work` runs on a pool made for it, waited for by a plain thread: `install` from a
/// pool's thread lets that thread run its own pool's other jobs while it waits, and one of them, needing the
/// same `OnceLock`, waited on this very thread's initialisation for ever (seen: a 1-thread pool encoding
/// documents hung on its first long piece). The waiting threads may fill the default pool, hence a new one.
pub fn on_own_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return std::thread::scope(|scope| {
            let waiter = scope.spawn(|| match rayon::ThreadPoolBuilder::new().num_threads(cores()).build() {
                Ok(pool) => pool.install(work),
                Err(_) => work(), // could not start threads: this plain thread's global pool
            });
            waiter.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
    }
    match thread_pool(0) {
        Ok(pool) => pool.install(work),
        Err(_) => work(), // could not start threads: rayon's global pool, as before
    }
}

type Pools = Vec<(usize, std::sync::Arc<rayon::ThreadPool>)>;

/// The pools kept between calls (see `thread_pool`), this process's (a forked child forgets its parent's).
fn kept_pools() -> std::sync::MutexGuard<'static, (u32, Pools)> {
    static POOLS: std::sync::Mutex<(u32, Pools)> = std::sync::Mutex::new((0, Vec::new()));
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let (owner, pools) = &mut *guard;
    if *owner != std::process::id() {
        std::mem::forget(std::mem::take(pools));
        *owner = std::process::id();
    }
    guard
}

/// `release_freed_memory` on the calling thread and on every thread of every pool kept (each when it is free):
/// `bytepair.release_memory`. A corpus worker calls it between batches once it holds more than its limit
/// (`bytepair.pipeline.tasks.MemoryKeeper`): the ids, buffers and texts of the batches before stay resident in the
/// encoding threads' heaps otherwise (~65 MB of a worker's 270 MB peak, reading parquet with 2 threads).
pub fn release_freed_memory_everywhere() {
    release_freed_memory();
    let pools: Vec<_> = kept_pools().1.iter().map(|(_, pool)| pool.clone()).collect();
    for pool in pools {
        pool.broadcast(|_| release_freed_memory());
    }
}

/// Most pools kept between calls (the most recently used sizes).
const POOLS_KEPT: usize = 4;

/// This process's pool of `threads` threads (0: rayon's default, every core or `RAYON_NUM_THREADS`; never more
/// than the cores), made once and kept: a batch's threads keep their piece caches warm from one call to the
/// next. Only the last few sizes used are kept, so that trying many thread counts leaves no idle threads
/// behind. In a forked child the parent's pools are forgotten, not dropped (dropping signals threads that do
/// not exist there), and new ones made.
pub fn thread_pool(threads: usize) -> Result<std::sync::Arc<rayon::ThreadPool>, error::Error> {
    let threads = at_most_cores(threads);
    let mut guard = kept_pools();
    let pools = &mut guard.1;
    if let Some(k) = pools.iter().position(|(n, _)| *n == threads) {
        let kept = pools.remove(k);
        let pool = kept.1.clone();
        pools.push(kept);
        return Ok(pool);
    }
    if pools.len() >= POOLS_KEPT {
        pools.remove(0); // its threads end once no call still uses it
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bytepair-{i}"))
        .build()
        .map_err(|e| error::Error::value(format!("cannot start {threads} threads: {e}")))?;
    let pool = std::sync::Arc::new(pool);
    pools.push((threads, pool.clone()));
    Ok(pool)
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
