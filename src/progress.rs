//! Progress display on stderr (indicatif) and periodic interruption checks for long loops.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
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
