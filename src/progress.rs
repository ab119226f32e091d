//! Progress display on stderr (indicatif) and periodic interruption checks for long loops: `Progress` for
//! reading and merging, `Pulse` for loops on any thread (pre-tokenizing with a custom regex), which share a stop
//! flag with the other threads of their job, and `run_interruptible` for waiting on a pool.

use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{Error, Result};
use crate::train::Observer;

/// How often the interruption check runs: often enough that Ctrl-C feels immediate, rarely enough to cost
/// nothing.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// Shows progress (when `visible`) and calls `check` every [`CHECK_EVERY`] — the Python layer uses it to
/// deliver Ctrl-C. On a terminal the display is a bar redrawn in place; otherwise (a log file, a CI job) it is
/// a plain line every few seconds, so asking for progress always shows something.
pub struct Progress<'c> {
    display: Option<Display>,
    check: Box<dyn FnMut() -> Result<()> + Send + 'c>,
    last_check: Instant,
}

enum Display {
    Bar(ProgressBar),
    Lines(Lines),
}

/// Plain progress lines for stderr that is not a terminal.
struct Lines {
    phase: &'static str,
    total: Option<u64>,
    done: u64,
    started: Instant,
    last_line: Instant,
}

/// How often plain progress lines are written.
const LINE_EVERY: Duration = Duration::from_secs(5);

impl Lines {
    fn new(phase: &'static str, total: Option<u64>) -> Lines {
        let now = Instant::now();
        Lines { phase, total, done: 0, started: now, last_line: now }
    }

    fn update(&mut self, done: u64) {
        self.done = done;
        if self.last_line.elapsed() >= LINE_EVERY {
            self.last_line = Instant::now();
            self.write();
        }
    }

    fn write(&self) {
        let seconds = self.started.elapsed().as_secs_f64();
        let line = match (self.phase, self.total) {
            ("reading", Some(total)) => format!(
                "reading: {:.1} of {:.1} MB ({:.1} MB/s)",
                self.done as f64 / 1e6,
                total as f64 / 1e6,
                self.done as f64 / 1e6 / seconds.max(1e-9)
            ),
            ("reading", None) => {
                format!(
                    "reading: {:.1} MB ({:.1} MB/s)",
                    self.done as f64 / 1e6,
                    self.done as f64 / 1e6 / seconds.max(1e-9)
                )
            }
            (phase, total) => format!("{phase}: {} of {} merges", self.done, total.unwrap_or(0)),
        };
        eprintln!("bytepair {line}, {seconds:.1} s");
    }
}

impl<'c> Progress<'c> {
    /// `total`: bytes to read, when known (a bar), or None (a running count).
    pub fn new(visible: bool, total: Option<u64>, check: impl FnMut() -> Result<()> + Send + 'c) -> Progress<'c> {
        let display = visible.then(|| {
            if !std::io::stderr().is_terminal() {
                return Display::Lines(Lines::new("reading", total));
            }
            let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr_with_hz(10));
            let template = if total.is_some() {
                "{msg:<9} [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec:>12} eta {eta:<3}"
            } else {
                "{spinner} {msg:<9} {binary_bytes:>10} {binary_bytes_per_sec:>12} {elapsed}"
            };
            bar.set_style(ProgressStyle::with_template(template).expect("valid template").progress_chars("=> "));
            bar.set_message("reading");
            Display::Bar(bar)
        });
        Progress { display, check: Box::new(check), last_check: Instant::now() }
    }

    /// Reading and counting: `done` bytes so far.
    pub fn bytes(&mut self, done: u64) -> Result<()> {
        self.update(done);
        self.maybe_check()
    }

    fn update(&mut self, done: u64) {
        match &mut self.display {
            Some(Display::Bar(bar)) => bar.set_position(done),
            Some(Display::Lines(lines)) => lines.update(done),
            None => {}
        }
    }

    pub fn maybe_check(&mut self) -> Result<()> {
        if self.last_check.elapsed() >= CHECK_EVERY {
            self.last_check = Instant::now();
            (self.check)()?;
        }
        Ok(())
    }

    /// Ends the display. A bar is cleared from the terminal: what it showed is done, and the summary printed after
    /// it says what came of it (a finished bar left behind went stale above the output).
    pub fn finish(&mut self) {
        match self.display.take() {
            Some(Display::Bar(bar)) => bar.finish_and_clear(),
            Some(Display::Lines(lines)) => lines.write(),
            None => {}
        }
    }
}

impl Observer for Progress<'_> {
    fn merges_planned(&mut self, planned: u64) {
        let Some(display) = &self.display else {
            return;
        };
        self.display = Some(match display {
            Display::Bar(bar) => {
                bar.finish_and_clear(); // the (empty) reading display a training starts with: not left behind
                let merges = ProgressBar::with_draw_target(Some(planned), ProgressDrawTarget::stderr_with_hz(10));
                merges.set_style(
                    ProgressStyle::with_template("{msg:<9} [{wide_bar}] {pos}/{len} merges, {elapsed} eta {eta:<3}")
                        .expect("valid template")
                        .progress_chars("=> "),
                );
                merges.set_message("merging");
                Display::Bar(merges)
            }
            Display::Lines(_) => Display::Lines(Lines::new("merging", Some(planned))),
        });
    }

    fn merge_done(&mut self, done: u64) -> Result<()> {
        self.update(done);
        self.maybe_check()
    }
}

// -- interrupting long loops ---------------------------------------------------------------------------------

/// The Ctrl-C check the Python layer installs (`check_signals` on Python's main thread, a no-op elsewhere);
/// none when the core is used from Rust alone.
static SIGNAL_CHECK: OnceLock<fn() -> Result<()>> = OnceLock::new();

/// Installs the Ctrl-C check that `Pulse` and `run_interruptible` call (once per process; later calls are
/// ignored).
pub fn set_signal_check(check: fn() -> Result<()>) {
    let _ = SIGNAL_CHECK.set(check);
}

fn signal_check() -> Result<()> {
    SIGNAL_CHECK.get().map_or(Ok(()), |check| check())
}

thread_local! {
    /// The stop flag of the job this thread works on, shared with the job's other threads (`sharing_stop`).
    static STOP: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `work` with `stop` as this thread's stop flag: its long loops (`Pulse`) end with `Error::interrupted`
/// once the flag is set, and set it when they see Ctrl-C themselves, so that one thread seeing it stops the
/// whole job. Python delivers Ctrl-C to its main thread only; the job's other threads learn of it this way.
pub fn sharing_stop<R>(stop: &Arc<AtomicBool>, work: impl FnOnce() -> R) -> R {
    let previous = STOP.with(|s| s.replace(Some(Arc::clone(stop))));
    // Restored even if `work` panics (the panic is turned into an exception further up, and the thread lives on).
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            STOP.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(previous);
    work()
}

/// Work units between two readings of the clock in `Pulse::tick` (a unit is a byte scanned, a backtracking
/// step or a search: ~1-50 ns each, so the clock is read every few tens of microseconds at most).
const UNITS_PER_CLOCK_READING: u64 = 1 << 12;

/// Ctrl-C for a long loop on any thread: `tick` it with the work done; every `CHECK_EVERY` it checks the job's
/// stop flag and (on Python's main thread) for Ctrl-C.
pub struct Pulse {
    units: u64,
    last_check: Instant,
    stop: Option<Arc<AtomicBool>>,
}

impl Default for Pulse {
    fn default() -> Self {
        Pulse::new()
    }
}

impl Pulse {
    pub fn new() -> Pulse {
        Pulse { units: 0, last_check: Instant::now(), stop: STOP.with(|s| s.borrow().clone()) }
    }

    /// Counts `units` of work done; an error when the job is to stop.
    #[inline]
    pub fn tick(&mut self, units: u64) -> Result<()> {
        self.units += units;
        if self.units >= UNITS_PER_CLOCK_READING {
            self.units = 0;
            if self.last_check.elapsed() >= CHECK_EVERY {
                return self.check();
            }
        }
        Ok(())
    }

    #[cold]
    fn check(&mut self) -> Result<()> {
        self.last_check = Instant::now();
        if self.stop.as_ref().is_some_and(|stop| stop.load(Ordering::Relaxed)) {
            return Err(Error::interrupted());
        }
        signal_check().inspect_err(|_| {
            if let Some(stop) = &self.stop {
                stop.store(true, Ordering::Relaxed);
            }
        })
    }
}

/// `f` applied to each of `items` in parallel on `pool`, in order, this thread waiting and checking for Ctrl-C
/// (`run_interruptible`); `f` runs inside `sharing_stop(stop, ..)`. With a pool of one thread, `f` runs on this
/// thread instead, which checks for Ctrl-C between items every `CHECK_EVERY`: handing the items to the pool's
/// thread and back cost a thread start and two wake-ups per call (a median of 40-80 µs on a 2-core VM, several
/// milliseconds when the other core was busy) and bought no parallelism.
pub fn map_interruptible<T: Sync, R: Send>(
    pool: &rayon::ThreadPool,
    stop: &Arc<AtomicBool>,
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    use rayon::prelude::*;
    if pool.current_num_threads() > 1 {
        let f = &f;
        return run_interruptible(stop, || {
            pool.install(|| items.par_iter().map(|item| sharing_stop(stop, || f(item))).collect())
        });
    }
    sharing_stop(stop, || {
        let mut last_check = Instant::now();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if last_check.elapsed() >= CHECK_EVERY {
                last_check = Instant::now();
                signal_check()?;
            }
            out.push(f(item));
        }
        Ok(out)
    })
}

/// Runs `work` (which may use a thread pool, its threads running inside `sharing_stop(stop, ..)`) on a thread of
/// its own while this one checks for Ctrl-C every `CHECK_EVERY`: on Ctrl-C the flag is set, the work's loops stop
/// at their next check, and the result is `Error::interrupted`. Waiting inside a pool's `install` instead, the
/// calling thread (Python's main thread, the only one that sees Ctrl-C) could not check anything until the
/// whole batch was done. Without a signal check installed (Rust alone), `work` simply runs here.
pub fn run_interruptible<R: Send>(stop: &Arc<AtomicBool>, work: impl FnOnce() -> R + Send) -> Result<R> {
    if SIGNAL_CHECK.get().is_none() {
        return Ok(work());
    }
    std::thread::scope(|scope| {
        let waiter = std::thread::current();
        let worker = scope.spawn(move || {
            let result = work();
            waiter.unpark();
            result
        });
        let mut interrupted = None;
        while !worker.is_finished() {
            std::thread::park_timeout(CHECK_EVERY);
            if interrupted.is_none()
                && let Err(e) = signal_check()
            {
                stop.store(true, Ordering::Relaxed);
                interrupted = Some(e);
            }
        }
        let result = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match interrupted {
            Some(e) => Err(e),
            None => Ok(result),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_interruptible_keeps_the_order_on_one_thread_and_on_several() {
        let items: Vec<u64> = (0..10_000).collect();
        let square = |x: &u64| x * x;
        let want: Vec<u64> = items.iter().map(square).collect();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            assert_eq!(map_interruptible(&pool, &stop, &items, square).unwrap(), want);
        }
    }

    #[test]
    fn map_interruptible_runs_a_one_thread_pool_s_work_on_the_calling_thread() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let caller = std::thread::current().id();
        let stop = Arc::new(AtomicBool::new(false));
        let threads = map_interruptible(&pool, &stop, &[1, 2, 3], |_| std::thread::current().id()).unwrap();
        assert!(threads.iter().all(|&t| t == caller));
        // ...where the items see the job's stop flag, as on a pool's threads.
        let flags = map_interruptible(&pool, &stop, &[1], |_| STOP.with(|s| s.borrow().is_some())).unwrap();
        assert_eq!(flags, [true]);
    }

    #[test]
    fn a_set_stop_flag_stops_the_loops_that_share_it() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut pulse = sharing_stop(&stop, Pulse::new);
        stop.store(true, Ordering::Relaxed);
        pulse.last_check -= CHECK_EVERY;
        let err = pulse.tick(UNITS_PER_CLOCK_READING).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Interrupted);
        // Outside `sharing_stop` a thread has no flag: its loops only check for Ctrl-C.
        let mut alone = Pulse::new();
        alone.last_check -= CHECK_EVERY;
        assert!(alone.tick(UNITS_PER_CLOCK_READING).is_ok());
    }
}
