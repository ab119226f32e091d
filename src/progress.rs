//! Progress display on stderr (indicatif) and periodic interruption checks for long loops.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
use crate::train::Observer;

/// How often the interruption check runs: often enough that Ctrl-C feels immediate, rarely enough to cost
/// nothing.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// Shows progress (when `visible`) and calls `check` every [`CHECK_EVERY`] — the Python layer uses it to
/// deliver Ctrl-C.
pub struct Progress<'c> {
    bar: Option<ProgressBar>,
    check: Box<dyn FnMut() -> Result<()> + Send + 'c>,
    last_check: Instant,
}

impl<'c> Progress<'c> {
    /// `total`: bytes to read, when known (a bar), or None (a running count).
    pub fn new(visible: bool, total: Option<u64>, check: impl FnMut() -> Result<()> + Send + 'c) -> Progress<'c> {
        let bar = visible.then(|| {
            let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr_with_hz(10));
            let template = if total.is_some() {
                "{msg:<9} [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec:>12} eta {eta:<3}"
            } else {
                "{spinner} {msg:<9} {binary_bytes:>10} {binary_bytes_per_sec:>12} {elapsed}"
            };
            bar.set_style(ProgressStyle::with_template(template).expect("valid template").progress_chars("=> "));
            bar.set_message("counting");
            bar
        });
        Progress { bar, check: Box::new(check), last_check: Instant::now() }
    }

    /// Reading and counting: `done` bytes so far.
    pub fn bytes(&mut self, done: u64) -> Result<()> {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
        self.maybe_check()
    }

    pub fn maybe_check(&mut self) -> Result<()> {
        if self.last_check.elapsed() >= CHECK_EVERY {
            self.last_check = Instant::now();
            (self.check)()?;
        }
        Ok(())
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
    }
}

impl Observer for Progress<'_> {
    fn merges_planned(&mut self, planned: u64) {
        if let Some(bar) = &self.bar {
            bar.finish();
            let merges = ProgressBar::with_draw_target(Some(planned), ProgressDrawTarget::stderr_with_hz(10));
            merges.set_style(
                ProgressStyle::with_template("{msg:<9} [{wide_bar}] {pos}/{len} merges, {elapsed} eta {eta:<3}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            merges.set_message("merging");
            self.bar = Some(merges);
        }
    }

    fn merge_done(&mut self, done: u64) -> Result<()> {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
        self.maybe_check()
    }
}
