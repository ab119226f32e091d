//! Running a custom pre-tokenization regex over untrusted text: which engine runs it, and how much work one text
//! may cost before bytepair stops with an error instead of hanging.
//!
//! Performance and safety notes:
//! - A regex that needs no backtracking (no look-around, back-reference, atomic group or possessive repeat, as
//!   fancy-regex's own analysis decides) runs on regex-automata's lazy DFA, driven here byte by byte so that
//!   every step is counted: a forward leftmost-first scan finds where a match ends, a reverse anchored scan where
//!   it starts. One search is linear in what it scans, but finding all matches is not: `\w+ |\w` on "aaaa…" scans
//!   to the end of the text from every position (n²/2 steps; 40 000 "a" took 4.2 s in regex-automata's own
//!   iterator on this machine, fancy-regex's delegate the same).
//! - Every other regex runs on fancy-regex's backtracking VM, which counts backtracking steps per search only,
//!   against a limit fixed when the regex is built. A ladder of builds with limits 256, 1 024, … 1 000 000 (each
//!   made when first needed) measures each search to within a factor four: a search that fails one rung is charged
//!   that rung's limit (it did at least that much work) and retried on the next. The top rung is fancy-regex's
//!   default limit, so no search that ran before fails now. `\w+(?=\s)|\w` on 40 000 "a" backtracks ~n²/2 times
//!   (92 s on this machine, loaded, before this change).
//! - Each text gets a budget in proportion to its length: `BASE + PER_BYTE × bytes` steps of the DFA (bytes
//!   scanned) or of the VM (backtracks). A pattern that stays within a few steps per byte on ordinary text (a
//!   piece's length plus the byte that ends it) is far from it; a quadratic one on a long run exceeds it within
//!   milliseconds, with a `ValueError` naming the pattern. What neither engine reports is not counted: the scans
//!   a look-around's delegate does inside one VM step (`a(?=.*b)` rescans to the end at each "a"), and searches
//!   the lazy DFA gives up on (a Unicode `\b` next to non-ASCII text runs on regex-automata's own engines,
//!   charged as far as its match reaches). Those can still be slow, never unbounded: Ctrl-C stops them.
//! - Ctrl-C: the search loops tick a `Pulse` (the clock is read every few thousand steps); one VM search is at most
//!   a million backtracks (well under a second).
//! - Matches are iterated as HF tokenizers (Oniguruma), fancy-regex and the regex crate do: leftmost-first, not
//!   overlapping, and an empty match right where the previous match ended is skipped.

use std::fmt;
use std::sync::{Arc, OnceLock};

use fancy_regex::internal::{AnalyzeContext, analyze, optimize};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input, MatchKind, meta};

use crate::error::{Error, Result, py_repr_cut};
use crate::progress::Pulse;

/// The budget of one text: `base + per_byte × bytes` steps of its engine. Any text may take the base (about a
/// tenth of a second); per byte, ~100× what ordinary patterns take on ordinary text. A VM step (a backtrack, ~30-100 ns)
/// costs more than a DFA step (a byte scanned, ~1-3 ns), and is charged to within a factor four (see `RUNGS`).
#[derive(Clone, Copy)]
struct Budget {
    base: u64,
    per_byte: u64,
}

const DFA_BUDGET: Budget = Budget { base: 1 << 22, per_byte: 256 };
const VM_BUDGET: Budget = Budget { base: 1 << 20, per_byte: 32 };
/// The VM's rungs: per-search backtracking limits, each four times the one before, the last fancy-regex's
/// default (one search that needs more is refused, as before).
const RUNGS: [usize; 7] = [256, 1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1_000_000];
/// Characters of a pattern that messages show.
pub const SHOWN_CHARS: usize = 200;
/// DFA steps between two checks of the budget and of Ctrl-C inside one long scan.
const STEPS_PER_CHECK: usize = 1 << 16;
/// The lazy DFA's transition cache, per thread and direction (regex-automata's default is 2 MB; large Unicode
/// classes fill that quickly, and a full cache is cleared and rebuilt as it scans).
const DFA_CACHE_BYTES: usize = 8 << 20;

/// A regex (fancy-regex syntax) that finds its matches within a budget of work per byte of text.
#[derive(Clone)]
pub struct BoundedRegex {
    inner: Arc<Inner>,
}

struct Inner {
    /// The pattern as the user wrote it, for messages.
    shown: String,
    /// Whether some match can be empty (as fancy-regex's analysis sees it: look-arounds are zero-width).
    matches_empty: bool,
    engine: Engine,
}

// One per regex, behind the `Arc`: the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
enum Engine {
    Linear(Linear),
    Backtracking(Backtracking),
}

impl fmt::Debug for BoundedRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let engine = match self.inner.engine {
            Engine::Linear(_) => "lazy DFA",
            Engine::Backtracking(_) => "backtracking",
        };
        write!(f, "BoundedRegex({:?}, {engine})", self.inner.shown)
    }
}

impl BoundedRegex {
    /// `pattern` in fancy-regex's syntax (bytepair's `pattern=`); `shown` is how messages name it (the pattern as
    /// the user or the file wrote it, which may be in another syntax).
    pub fn new(pattern: &str, shown: &str) -> Result<BoundedRegex> {
        let invalid = |e: &dyn fmt::Display| {
            Error::value(format!(
                "pattern {} is not a valid regex: {e}. Use one of \"gpt2\", \"cl100k\", \"o200k\", \"whitespace\", \
                 None (no split), or a valid regex",
                py_repr_cut(shown, SHOWN_CHARS)
            ))
        };
        let mut tree = fancy_regex::Expr::parse_tree(pattern).map_err(|e| invalid(&e))?;
        // fancy-regex's own decision, made the way it makes it: a regex it would hand whole to the regex crate
        // needs no backtracking. (Its optimiser turns a trailing look-ahead into a capture group, which the DFA
        // below does not report: such patterns stay with fancy-regex.)
        let moved_lookahead = optimize(&mut tree);
        let context = AnalyzeContext {
            explicit_capture_group_0: moved_lookahead,
            find_not_empty: false,
            disallow_empty_match_at_eof_after_newline: false,
            allow_input_assertion_overrides: false,
        };
        let info = analyze(&tree, context).map_err(|e| invalid(&e))?;
        let (hard, matches_empty) = (info.hard, info.min_size == 0);
        let engine = if !hard && !moved_lookahead {
            let mut plain = String::with_capacity(pattern.len() + 8);
            tree.expr.to_str(&mut plain, 0);
            Engine::Linear(Linear::new(&plain).map_err(|e| invalid(&e))?)
        } else {
            Engine::Backtracking(Backtracking::new(pattern).map_err(|e| invalid(&e))?)
        };
        Ok(BoundedRegex { inner: Arc::new(Inner { shown: shown.to_string(), matches_empty, engine }) })
    }

    /// Whether some match can be the empty string.
    pub fn matches_empty(&self) -> bool {
        self.inner.matches_empty
    }

    /// Whether the regex runs on the backtracking engine.
    pub fn backtracks(&self) -> bool {
        matches!(self.inner.engine, Engine::Backtracking(_))
    }

    fn budget(&self) -> Budget {
        if self.backtracks() { VM_BUDGET } else { DFA_BUDGET }
    }

    /// Calls `found(start, end)` for each match in `text`, in order (empty matches included), or stops with an
    /// error when the work exceeds the text's budget, a search backtracks too much, or the user presses Ctrl-C.
    pub fn for_each_match(&self, text: &str, mut found: impl FnMut(usize, usize)) -> Result<()> {
        let Budget { base, per_byte } = self.budget();
        let mut meter = Meter {
            spent: 0,
            budget: base.saturating_add(per_byte.saturating_mul(text.len() as u64)),
            pulse: Pulse::new(),
        };
        let mut at = 0;
        let mut previous_end = None;
        while at <= text.len() {
            let found_here = match &self.inner.engine {
                Engine::Linear(linear) => linear.search(text, at, &mut meter),
                Engine::Backtracking(vm) => vm.search(text, at, &mut meter),
            };
            let Some((start, end)) = found_here.map_err(|e| self.explain(e, text, &meter))? else {
                break;
            };
            if start == end {
                at = after(text, end);
                // An empty match right after a match, or inside a character (the DFA works on bytes), is skipped.
                if previous_end == Some(end) || !text.is_char_boundary(end) {
                    continue;
                }
            } else {
                at = end;
            }
            previous_end = Some(end);
            found(start, end);
        }
        Ok(())
    }

    /// The error for a search that stopped: what happened, with the pattern and what to do.
    #[cold]
    fn explain(&self, stop: Stop, text: &str, meter: &Meter) -> Error {
        let pattern = py_repr_cut(&self.inner.shown, SHOWN_CHARS);
        match stop {
            Stop::Error(e) => e,
            Stop::OverBudget => {
                let what =
                    if self.backtracks() { "backtracking steps" } else { "steps (bytes scanned by its automaton)" };
                Error::value(format!(
                    "the pattern {pattern} took more than {} {what} on a text of {} bytes, and bytepair stopped it \
                     rather than run on: its work grows faster than the text (for example `\\w+(?=\\s)|\\w` or \
                     `\\w+ |\\w` on a long run of letters try the long alternative again from every position, \
                     ~n²/2 steps). Make each alternative fail early: drop the look-ahead or the long alternative \
                     that fails at the end of a run (`\\w+(?=\\s)|\\w` splits like `\\w+` on most text), or use a \
                     named pattern (\"gpt2\", \"cl100k\", \"o200k\"). The budget is {} + {} per byte.",
                    meter.budget,
                    text.len(),
                    self.budget().base,
                    self.budget().per_byte,
                ))
            }
            Stop::SearchLimit { at } => Error::value(format!(
                "the pattern {pattern} needed more than {} backtracking steps to find one match at character {} \
                 (the limit for one search), and bytepair stopped it: it backtracks catastrophically there, as \
                 nested or overlapping repeats do (`(a|a)+`, `(a+)+`, `(\\w|\\d)+`) before something that fails. \
                 Rewrite that part so that each character can be matched one way only, or make the repeat \
                 possessive (`(?:a|b)++`) or atomic (`(?>...)`)",
                RUNGS[RUNGS.len() - 1],
                crate::tokenizer::char_position(text, at)
            )),
        }
    }
}

/// Why a search stopped without a result.
enum Stop {
    /// The text's budget is spent.
    OverBudget,
    /// One search needed more backtracking than the top rung allows; it started at byte `at`.
    SearchLimit { at: usize },
    /// Ctrl-C, or an engine error.
    Error(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Error(e)
    }
}

/// The work one text has cost so far, against its budget.
struct Meter {
    spent: u64,
    budget: u64,
    pulse: Pulse,
}

impl Meter {
    /// Counts `steps` done; `OverBudget` once the budget is spent, an error on Ctrl-C.
    #[inline]
    fn charge(&mut self, steps: u64) -> std::result::Result<(), Stop> {
        self.spent = self.spent.saturating_add(steps);
        if self.spent > self.budget {
            return Err(Stop::OverBudget);
        }
        self.pulse.tick(steps.max(1))?;
        Ok(())
    }
}

/// The first byte offset where a search after an empty match at `at` starts: the next character (past the end:
/// no more searches).
fn after(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut next = at + 1;
    while next < bytes.len() && bytes[next] & 0xC0 == 0x80 {
        next += 1;
    }
    next
}

// -- the lazy DFA ------------------------------------------------------------------------------------------

struct Linear {
    /// Unanchored, leftmost-first: where the leftmost-first match ends.
    forward: DFA,
    /// The regex reversed, all matches, anchored at that end: where it starts (the smallest start found).
    reverse: DFA,
    caches: Pool<Caches, Box<dyn Fn() -> Caches + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>>,
    /// For searches the lazy DFA gives up on (a Unicode `\b` beside non-ASCII text), built when first needed.
    fallback: OnceLock<meta::Regex>,
    pattern: String,
}

struct Caches {
    forward: Cache,
    reverse: Cache,
}

impl Linear {
    fn new(pattern: &str) -> std::result::Result<Linear, Box<dyn std::error::Error + Send + Sync>> {
        let config = || {
            DFA::config()
                .unicode_word_boundary(true)
                .cache_capacity(DFA_CACHE_BYTES)
                .skip_cache_capacity_check(true)
                .minimum_cache_clear_count(None)
        };
        let forward = DFA::builder().configure(config().match_kind(MatchKind::LeftmostFirst)).build(pattern)?;
        let reverse = DFA::builder()
            .configure(config().match_kind(MatchKind::All))
            .thompson(thompson::Config::new().reverse(true))
            .build(pattern)?;
        let (f, r) = (forward.clone(), reverse.clone());
        let caches = Pool::new(Box::new(move || Caches { forward: f.create_cache(), reverse: r.create_cache() })
            as Box<dyn Fn() -> Caches + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>);
        Ok(Linear { forward, reverse, caches, fallback: OnceLock::new(), pattern: pattern.to_string() })
    }

    /// The leftmost-first match starting at `from` or later.
    fn search(&self, text: &str, from: usize, meter: &mut Meter) -> std::result::Result<Option<(usize, usize)>, Stop> {
        let hay = text.as_bytes();
        let mut caches = self.caches.get();
        let end = match self.forward_end(&mut caches.forward, hay, from, meter)? {
            Scan::Done(None) => return Ok(None),
            Scan::Done(Some(end)) => end,
            Scan::GaveUp => return self.fallback_search(text, from, meter),
        };
        // The reverse scan goes back from the end at most to `from`: charged so (the forward scan covered it).
        meter.charge((end - from) as u64)?;
        let input = Input::new(hay).range(from..end).anchored(Anchored::Yes);
        match self.reverse.try_search_rev(&mut caches.reverse, &input) {
            Ok(Some(start)) => Ok(Some((start.offset(), end))),
            // A match ends here, so it starts somewhere; regex-automata's engines settle a search it gave up on.
            Ok(None) | Err(_) => self.fallback_search(text, from, meter),
        }
    }

    /// Where the leftmost-first match from `from` ends, every byte scanned charged to `meter`.
    fn forward_end(
        &self,
        cache: &mut Cache,
        hay: &[u8],
        from: usize,
        meter: &mut Meter,
    ) -> std::result::Result<Scan, Stop> {
        let dfa = &self.forward;
        let input = Input::new(hay).range(from..);
        let Ok(mut state) = dfa.start_state_forward(cache, &input) else { return Ok(Scan::GaveUp) };
        let mut end = None;
        let mut at = from;
        let mut checked = from;
        while at < hay.len() {
            let Ok(next) = dfa.next_state(cache, state, hay[at]) else { return Ok(Scan::GaveUp) };
            state = next;
            if state.is_tagged() {
                if state.is_match() {
                    // Matches show one byte late: this one ends before byte `at`.
                    end = Some(at);
                } else if state.is_dead() {
                    meter.charge((at + 1 - checked) as u64)?;
                    return Ok(Scan::Done(end));
                } else if state.is_quit() {
                    meter.charge((at + 1 - checked) as u64)?;
                    return Ok(Scan::GaveUp);
                }
            }
            at += 1;
            if at - checked >= STEPS_PER_CHECK {
                meter.charge((at - checked) as u64)?;
                checked = at;
            }
        }
        meter.charge((at + 1 - checked) as u64)?;
        let Ok(last) = dfa.next_eoi_state(cache, state) else { return Ok(Scan::GaveUp) };
        if last.is_match() {
            end = Some(hay.len());
        }
        Ok(Scan::Done(end))
    }

    /// The search by regex-automata's own engines (PikeVM or bounded backtracker: linear in what they scan, which
    /// is not reported), charged as far as the match reaches.
    fn fallback_search(
        &self,
        text: &str,
        from: usize,
        meter: &mut Meter,
    ) -> std::result::Result<Option<(usize, usize)>, Stop> {
        let fallback = match self.fallback.get() {
            Some(regex) => regex,
            None => {
                // It built as two lazy DFAs: it builds as a meta regex.
                let built = meta::Regex::new(&self.pattern)
                    .map_err(|e| Stop::Error(Error::value(format!("cannot build the pattern again: {e}"))))?;
                self.fallback.get_or_init(|| built)
            }
        };
        let found = fallback.search(&Input::new(text).range(from..));
        meter.charge(found.map_or(text.len() - from, |m| m.end() - from) as u64 + 1)?;
        Ok(found.map(|m| (m.start(), m.end())))
    }
}

/// How a forward scan ended.
enum Scan {
    /// With the end of the leftmost-first match, if any.
    Done(Option<usize>),
    /// The lazy DFA cannot decide (a quit byte, or an error from its cache).
    GaveUp,
}

// -- fancy-regex's backtracking VM ---------------------------------------------------------------------------

struct Backtracking {
    pattern: String,
    /// One build per rung of `RUNGS`, made when first needed (the first at once, to report errors early).
    rungs: [OnceLock<fancy_regex::Regex>; RUNGS.len()],
}

impl Backtracking {
    fn new(pattern: &str) -> std::result::Result<Backtracking, fancy_regex::Error> {
        let vm = Backtracking { pattern: pattern.to_string(), rungs: Default::default() };
        let first = Backtracking::build(pattern, RUNGS[0])?;
        let _ = vm.rungs[0].set(first);
        Ok(vm)
    }

    fn build(pattern: &str, limit: usize) -> std::result::Result<fancy_regex::Regex, fancy_regex::Error> {
        fancy_regex::RegexBuilder::new(pattern).backtrack_limit(limit).build()
    }

    fn rung(&self, i: usize) -> std::result::Result<&fancy_regex::Regex, Stop> {
        if let Some(regex) = self.rungs[i].get() {
            return Ok(regex);
        }
        // The same pattern built before with another limit: it builds again.
        let built = Backtracking::build(&self.pattern, RUNGS[i])
            .map_err(|e| Stop::Error(Error::value(format!("cannot build the pattern again: {e}"))))?;
        Ok(self.rungs[i].get_or_init(|| built))
    }

    fn search(&self, text: &str, from: usize, meter: &mut Meter) -> std::result::Result<Option<(usize, usize)>, Stop> {
        use fancy_regex::{Error as FancyError, RuntimeError};
        // The budget is checked once the search is done: a search that alone needs more than the top rung is
        // reported as such (it backtracks catastrophically at one place), not as a spent budget.
        let mut spent = 0;
        for (i, &limit) in RUNGS.iter().enumerate() {
            match self.rung(i)?.find_from_pos(text, from) {
                Ok(found) => {
                    // More than the rung below's limit was needed (or, on the first rung, up to its limit).
                    meter.charge(spent + if i == 0 { 1 } else { RUNGS[i - 1] as u64 })?;
                    return Ok(found.map(|m| (m.start(), m.end())));
                }
                Err(FancyError::RuntimeError(RuntimeError::BacktrackLimitExceeded)) => {
                    spent += limit as u64;
                    meter.pulse.tick(limit as u64)?;
                }
                Err(e) => return Err(Stop::Error(Error::value(format!("the pattern failed on this text: {e}")))),
            }
        }
        Err(Stop::SearchLimit { at: from })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(regex: &BoundedRegex, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        regex.for_each_match(text, |s, e| out.push((s, e))).unwrap();
        out
    }

    fn matches(pattern: &str, text: &str) -> Vec<(usize, usize)> {
        all(&BoundedRegex::new(pattern, pattern).unwrap(), text)
    }

    fn fancy_all(regex: &fancy_regex::Regex, text: &str) -> Vec<(usize, usize)> {
        regex.find_iter(text).map(|m| m.unwrap().range()).map(|r| (r.start, r.end)).collect()
    }

    fn fancy(pattern: &str, text: &str) -> Vec<(usize, usize)> {
        fancy_all(&fancy_regex::Regex::new(pattern).unwrap(), text)
    }

    /// A small deterministic generator (xorshift), so the differential tests need no crate and always run the
    /// same cases.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// A random regex over a few atoms: alternations, concatenations, repeats (greedy and lazy), groups,
    /// anchors, word boundaries, classes, and empty alternatives.
    fn random_regex(rng: &mut Rng, depth: usize) -> String {
        const ATOMS: &[&str] = &[
            "a", "b", "ab", " ", r"\s", r"\S", r"\w", r"\d", r"\p{L}", "[a-c]", "[^a ]", ".", "é", "^", "$", r"\b", "",
            r"\p{Han}", "(?i:A)", r"\n",
        ];
        let atom = |rng: &mut Rng| -> String {
            if depth > 0 && rng.below(3) == 0 {
                format!("(?:{})", random_regex(rng, depth - 1))
            } else {
                rng.pick(ATOMS).to_string()
            }
        };
        let mut alternatives = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let mut concat = String::new();
            for _ in 0..1 + rng.below(3) {
                let a = atom(rng);
                concat.push_str(&a);
                let quantifier = rng.pick(&["", "", "*", "+", "?", "*?", "+?", "??", "{1,3}", "{2}"]);
                if !a.is_empty() && !matches!(a.as_str(), "^" | "$" | r"\b") {
                    concat.push_str(quantifier);
                }
            }
            alternatives.push(concat);
        }
        alternatives.join("|")
    }

    fn random_text(rng: &mut Rng) -> String {
        const PARTS: &[&str] = &["a", "b", "ab", " ", "  ", "\n", "é", "中", "1", "A", "-", "aaa", "\t"];
        (0..rng.below(12)).map(|_| rng.pick(PARTS)).collect()
    }

    #[test]
    fn both_engines_find_fancy_regexes_matches() {
        // The DFA driver (and the VM ladder) against fancy-regex's own iterator, on random regexes and texts.
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut linear = 0;
        for _ in 0..800 {
            let pattern = random_regex(&mut rng, 2);
            let Ok(regex) = BoundedRegex::new(&pattern, &pattern) else { continue };
            let oracle = fancy_regex::Regex::new(&pattern).unwrap();
            linear += !regex.backtracks() as usize;
            for _ in 0..6 {
                let text = random_text(&mut rng);
                assert_eq!(all(&regex, &text), fancy_all(&oracle, &text), "{pattern:?} on {text:?}");
            }
        }
        assert!(linear > 500, "most random regexes need no backtracking ({linear})");
    }

    #[test]
    fn look_arounds_and_possessive_repeats_backtrack() {
        for pattern in [r"\s+(?!\S)|\s+", r"(?<=a)b", r"a++b|a", r"(a)\1", r"\w+(?=\s)|\w"] {
            let regex = BoundedRegex::new(pattern, pattern).unwrap();
            assert!(regex.backtracks(), "{pattern}");
            for text in ["a  b ", "aab ab", "aa a", "abab  \n x"] {
                assert_eq!(matches(pattern, text), fancy(pattern, text), "{pattern:?} on {text:?}");
            }
        }
        for pattern in [r"\w+|\s+", r"[^\s\p{L}]+|\p{L}+", r"\b\w+\b", r"(?m:^)\s*"] {
            assert!(!BoundedRegex::new(pattern, pattern).unwrap().backtracks(), "{pattern}");
        }
    }

    #[test]
    fn a_unicode_word_boundary_beside_non_ascii_text_falls_back_exactly() {
        let text = "naïve café 中文 x1 é";
        assert_eq!(matches(r"\b\w+\b", text), fancy(r"\b\w+\b", text));
        assert_eq!(matches(r"\B.", text), fancy(r"\B.", text));
    }

    fn stopped(pattern: &str, text: &str) -> String {
        let regex = BoundedRegex::new(pattern, pattern).unwrap();
        regex.for_each_match(text, |_, _| {}).unwrap_err().message
    }

    #[test]
    fn quadratic_patterns_stop_within_their_budget() {
        // Backtracking (the VM) and scanning (the DFA): both are refused with the pattern named. (No timing is
        // asserted: the budget bounds the work, which bench-free tests on a shared machine cannot time.)
        let message = stopped(r"\w+(?=\s)|\w", &"a".repeat(10_000));
        assert!(message.contains(r"'\\w+(?=\\s)|\\w'") && message.contains("backtracking steps"), "{message}");
        let message = stopped(r"\w+ |\w", &"a".repeat(200_000));
        assert!(message.contains("bytes scanned") && message.contains("200000 bytes"), "{message}");
        // The same patterns on text with spaces are linear, and within the budget.
        let words = "word ".repeat(40_000);
        assert_eq!(matches(r"\w+(?=\s)|\w", &words).len(), 40_000);
        assert_eq!(matches(r"\w+ |\w", &words).len(), 40_000);
    }

    #[test]
    fn a_search_that_backtracks_catastrophically_names_the_limit_and_the_place() {
        let text = format!("xy{}c", "a".repeat(30));
        let message = stopped(r"(a|a)+(?=b)|.", &text);
        assert!(message.contains("1000000 backtracking steps") && message.contains("at character 2"), "{message}");
        assert!(message.contains(r"'(a|a)+(?=b)|.'"), "{message}");
    }

    #[test]
    fn empty_matches_follow_the_usual_iteration_rules() {
        // Every position, except right after a non-empty match; never inside a character.
        assert_eq!(matches(r"\s*", "a  é"), [(0, 0), (1, 3), (5, 5)]);
        assert_eq!(matches(r"\s*", "a  é"), fancy(r"\s*", "a  é"));
        assert_eq!(matches(r"(?=[A-Z])", "HelloWorld"), [(0, 0), (5, 5)]);
    }
}
