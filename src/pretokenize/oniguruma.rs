//! HF tokenizers runs a `Split` pre-tokenizer's regex with Oniguruma; bytepair runs regexes with fancy-regex and
//! regex-automata. The two syntaxes look alike and differ in places that change which text a regex matches.
//! This module rewrites an Oniguruma regex (as HF reads it: Oniguruma's default syntax) into one bytepair runs
//! with the same matches, and refuses, naming the construct, what it cannot rewrite exactly.
//!
//! What was rewritten, each checked against HF `tokenizers` over every code point or on random texts
//! (tests/adversarial/test_hf_split.py):
//! - `\w` is Unicode Alphabetic, marks, decimal digits, connector punctuation and ² ³ ¹ ¼ ½ ¾ — but not those six
//!   inside a class (`[\w]`); the zero-width joiners are in neither, as they are in bytepair's `\w`; `\b`, `\B`
//!   follow the first. `\h` is a hex digit. POSIX
//!   classes are Unicode (`[[:punct:]]` is punctuation and symbols); `\p{Word}`, `\p{Alnum}`… too.
//! - `^` and `$` are line anchors: `^` after any "\n" except at the very end, `$` before any "\n" and at the end.
//!   `\Z` is the end or before a final "\n". `(?m)` makes `.` match "\n" (bytepair's `(?s)`).
//! - `X{n,m}+` and `X{n}+` repeat the repeat (`(?:X{n,m})+`), not possessive; `X{n}?` is optional
//!   (`(?:X{n})?`), `X{n,m}?` lazy; a quantifier after a quantifier repeats it again; `{,n}` is `{0,n}`; a `{`
//!   that does not start a repeat is a literal.
//! - An option in the middle of a group (`ab(?i)c|d`) covers the rest of the group, alternatives included
//!   (`ab(?i:c|d)`).
//! - Escaped punctuation is the literal (`\<` is "<", a word start in fancy-regex).
//!
//! Refused: back-references, subroutines, conditionals, absent groups, `\K`, `\G`, `\R`, `\X`, `\N`, `\O`, `\y`,
//! octal and control escapes, `(?x)` and options other than `i` and `m`, `[[:graph:]]`/`[[:print:]]`, and in a
//! case-insensitive part: non-ASCII characters, `\p{..}` (Oniguruma does not fold them, fancy-regex does) and
//! the letter pairs Oniguruma also matches as one character ("ss" matches "ß", "fi" matches "ﬁ", …).

use crate::error::{py_repr, py_repr_cut};

/// An Oniguruma regex rewritten for bytepair's engines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The regex in fancy-regex's syntax, with Oniguruma's meaning.
    pub regex: String,
    /// The first construct whose meaning depends on the syntax (the same text read by fancy-regex would match
    /// other text, or not parse); None when both read the regex alike.
    pub differs: Option<String>,
}

/// Deepest nesting of groups and classes taken (a deeper regex is refused rather than parsed by recursion).
const MAX_DEPTH: usize = 200;
/// Largest repeat count taken (Oniguruma's limit is 100 000; a large count makes a huge automaton).
const MAX_REPEAT: u32 = 1000;

/// Oniguruma's `\w` (and `\p{Word}`) outside a class, as a class body: checked against HF over every code point.
const WORD: &str = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}";
/// The same inside a class, where Oniguruma leaves out ² ³ ¹ ¼ ½ ¾ (`[\w]` is not `\w`).
const WORD_IN_CLASS: &str = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}";

/// The regex as bytepair's engines read it, or a message saying which construct cannot be kept exact.
pub fn translate(regex: &str) -> Result<Translation, String> {
    let mut t = Translator {
        chars: regex.chars().collect(),
        at: 0,
        out: String::new(),
        differs: None,
        depth: 0,
        previous_literal: None,
    };
    let flags = Flags { case_insensitive: false, dot_all: false };
    t.alternation(flags, true)?;
    if t.at < t.chars.len() {
        return Err(t.refuse(format!("an unmatched ')' at character {}", t.at)));
    }
    Ok(Translation { regex: t.out, differs: t.differs })
}

#[derive(Clone, Copy)]
struct Flags {
    case_insensitive: bool,
    /// Oniguruma's `(?m)`: `.` matches "\n".
    dot_all: bool,
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    differs: Option<String>,
    depth: usize,
    /// The last literal of a case-insensitive run, with nothing but group boundaries after it: Oniguruma folds
    /// two such letters together ("ss" also matches "ß"), across `(?:…)` boundaries too.
    previous_literal: Option<char>,
}

/// What the last item of a sequence was, for the quantifier after it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Something a quantifier may repeat, starting at this offset of the output.
    Repeatable(usize),
    /// A zero-width assertion (anchor, look-around, word boundary): Oniguruma refuses to repeat one.
    Assertion,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.chars.len() >= self.at + n && self.chars[self.at..self.at + n].iter().copied().eq(s.chars()) {
            self.at += n;
            true
        } else {
            false
        }
    }

    /// Records that the regex reads differently in fancy-regex's syntax (the first such construct is kept).
    fn differs(&mut self, what: &str) {
        if self.differs.is_none() {
            self.differs = Some(what.to_string());
        }
    }

    fn refuse(&self, what: String) -> String {
        let chars: String = self.chars.iter().collect();
        format!(
            "the Split regex {} uses {what}, which bytepair cannot run exactly as HF tokenizers (Oniguruma) does",
            py_repr_cut(&chars, super::engine::SHOWN_CHARS)
        )
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.refuse(format!("groups or classes nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    /// Alternatives up to the end of the enclosing group (its `)` is left for the caller) or of the regex.
    fn alternation(&mut self, flags: Flags, top: bool) -> Result<(), String> {
        loop {
            self.sequence(flags)?;
            match self.peek() {
                Some('|') => {
                    self.at += 1;
                    self.out.push('|');
                }
                Some(')') if !top => return Ok(()),
                Some(')') => return Err(self.refuse(format!("an unmatched ')' at character {}", self.at))),
                None => return Ok(()),
                Some(_) => unreachable!("a sequence ends at '|', ')' or the end"),
            }
        }
    }

    /// Items up to `|`, `)` or the end.
    fn sequence(&mut self, flags: Flags) -> Result<(), String> {
        let sequence_start = self.out.len();
        let mut last: Option<Item> = None;
        while let Some(c) = self.peek() {
            match c {
                '|' => {
                    self.previous_literal = None;
                    return Ok(());
                }
                ')' => return Ok(()),
                '*' | '+' | '?' => {
                    let Some(item) = last else {
                        return Err(self.refuse(format!("a quantifier {c:?} with nothing before it")));
                    };
                    self.quantifiers(item)?;
                    self.previous_literal = None;
                }
                '{' if self.interval_here().is_some() => {
                    let Some(item) = last else {
                        return Err(self.refuse("a repeat {…} with nothing before it".to_string()));
                    };
                    self.quantifiers(item)?;
                    self.previous_literal = None;
                }
                '(' => {
                    let start = self.out.len();
                    match self.group(flags, start == sequence_start)? {
                        Some(item) => last = Some(item),
                        // An option for the rest of the group: it took the rest of the alternation.
                        None => return Ok(()),
                    }
                    if !matches!(last, Some(Item::Repeatable(_))) {
                        self.previous_literal = None;
                    }
                }
                '[' => {
                    let start = self.out.len();
                    self.class(flags)?;
                    last = Some(Item::Repeatable(start));
                    self.previous_literal = None;
                }
                '\\' => {
                    let start = self.out.len();
                    last = Some(self.escape(flags, start)?);
                }
                '.' => {
                    self.at += 1;
                    let start = self.out.len();
                    self.out.push_str(if flags.dot_all { "(?s:.)" } else { "." });
                    last = Some(Item::Repeatable(start));
                    self.previous_literal = None;
                }
                '^' => {
                    self.at += 1;
                    self.differs("'^' (a line start in Oniguruma)");
                    // A line start, but not at the very end after a final "\n".
                    self.out.push_str(r"(?:(?m:^)(?!\z))");
                    last = Some(Item::Assertion);
                    self.previous_literal = None;
                }
                '$' => {
                    self.at += 1;
                    self.differs("'$' (a line end in Oniguruma)");
                    self.out.push_str("(?m:$)");
                    last = Some(Item::Assertion);
                    self.previous_literal = None;
                }
                _ => {
                    self.at += 1;
                    if c == '{' {
                        self.differs("'{' as a literal");
                    }
                    let start = self.out.len();
                    self.literal(c, flags)?;
                    last = Some(Item::Repeatable(start));
                }
            }
        }
        Ok(())
    }

    /// A literal character outside a class.
    fn literal(&mut self, c: char, flags: Flags) -> Result<(), String> {
        if flags.case_insensitive {
            if !c.is_ascii() {
                return Err(self.refuse(format!(
                    "the non-ASCII character {} in a case-insensitive part (Oniguruma folds it by rules of its own)",
                    py_repr(&c.to_string())
                )));
            }
            if let Some(p) = self.previous_literal {
                let pair = format!("{}{}", p.to_ascii_lowercase(), c.to_ascii_lowercase());
                if ["ss", "st", "ff", "fi", "fl"].contains(&pair.as_str()) {
                    return Err(self.refuse(format!(
                        "{} in a case-insensitive part (Oniguruma also matches it as one character, such as ß or \
                         the ligatures ﬁ ﬂ ﬀ ﬆ; write one of the letters as a class, e.g. [{p}]{c})",
                        py_repr(&format!("{p}{c}"))
                    )));
                }
            }
            self.previous_literal = Some(c);
        } else {
            self.previous_literal = None;
        }
        push_char(&mut self.out, c);
        Ok(())
    }

    /// `{n}`, `{n,}`, `{,m}` or `{n,m}` at the current position: (n, m, the text's length, whether it had a comma).
    fn interval_here(&self) -> Option<(u32, Option<u32>, usize, bool)> {
        if self.peek() != Some('{') {
            return None;
        }
        let mut i = self.at + 1;
        let number = |i: &mut usize| -> Option<Option<u32>> {
            let start = *i;
            while *i < self.chars.len() && self.chars[*i].is_ascii_digit() {
                *i += 1;
            }
            if *i == start {
                return Some(None);
            }
            let digits: String = self.chars[start..*i].iter().collect();
            // More digits than any count: still a repeat in Oniguruma (it refuses it as too big).
            Some(Some(digits.parse::<u32>().unwrap_or(u32::MAX)))
        };
        let low = number(&mut i)?;
        let comma = self.chars.get(i) == Some(&',');
        let high = if comma {
            i += 1;
            number(&mut i)?
        } else {
            low
        };
        if self.chars.get(i) != Some(&'}') || (low.is_none() && high.is_none()) {
            return None;
        }
        Some((low.unwrap_or(0), high.filter(|_| comma || low.is_some()), i + 1 - self.at, comma))
    }

    /// The quantifiers after an item: each one after the first repeats what came before it.
    fn quantifiers(&mut self, item: Item) -> Result<(), String> {
        let Item::Repeatable(start) = item else {
            return Err(self.refuse("a quantifier after an anchor, a look-around or a word boundary".to_string()));
        };
        if self.out.len() == start {
            return Err(self.refuse("a quantifier on an empty group".to_string()));
        }
        let mut count = 0;
        loop {
            let wrap = |t: &mut Translator| {
                t.out.insert_str(start, "(?:");
                t.out.push(')');
            };
            if let Some((low, high, len, comma)) = self.interval_here() {
                if low > MAX_REPEAT || high.is_some_and(|h| h > MAX_REPEAT) {
                    return Err(self.refuse(format!("a repeat count above {MAX_REPEAT}")));
                }
                if high.is_some_and(|h| h < low) {
                    return Err(
                        self.refuse(format!("the repeat {{{low},{}}} (its counts reversed)", high.unwrap_or(0)))
                    );
                }
                if count > 0 {
                    self.differs("a quantifier right after another");
                    wrap(self);
                }
                self.at += len;
                match high {
                    Some(h) if h == low && !comma => self.out.push_str(&format!("{{{low}}}")),
                    Some(h) => self.out.push_str(&format!("{{{low},{h}}}")),
                    None => self.out.push_str(&format!("{{{low},}}")),
                }
                if !comma && self.peek() == Some('?') {
                    // `X{n}?` is `(?:X{n})?` in Oniguruma's syntax.
                    self.differs("'{n}?' (optional in Oniguruma)");
                    self.at += 1;
                    wrap(self);
                    self.out.push('?');
                } else if self.eat('?') {
                    self.out.push('?');
                } else if self.peek() == Some('+') {
                    // `X{n,m}+` repeats the repeat (possessive in fancy-regex).
                    self.differs("'{n,m}+' (a repeated repeat in Oniguruma)");
                    self.at += 1;
                    wrap(self);
                    self.out.push('+');
                }
            } else if let Some(c @ ('*' | '+' | '?')) = self.peek() {
                if count > 0 {
                    self.differs("a quantifier right after another");
                    wrap(self);
                }
                self.at += 1;
                self.out.push(c);
                if self.eat('?') {
                    self.out.push('?');
                } else if self.eat('+') {
                    self.out.push('+');
                }
            } else {
                return Ok(());
            }
            count += 1;
        }
    }

    /// A group at `(`. None for an option that covers the rest of the enclosing group (its alternatives are
    /// then read here, up to the `)` that ends the enclosing group, which is left for the caller).
    fn group(&mut self, flags: Flags, at_sequence_start: bool) -> Result<Option<Item>, String> {
        let opened_at = self.at;
        self.at += 1;
        self.deeper()?;
        let start = self.out.len();
        let mut inner = flags;
        let assertion;
        if self.eat('?') {
            if self.eat(':') {
                self.out.push_str("(?:");
                assertion = false;
            } else if self.eat('=') || self.eat('!') {
                let negative = self.chars[self.at - 1] == '!';
                self.out.push_str(if negative { "(?!" } else { "(?=" });
                assertion = true;
            } else if self.eat_str("<=") || self.eat_str("<!") {
                let negative = self.chars[self.at - 1] == '!';
                self.out.push_str(if negative { "(?<!" } else { "(?<=" });
                assertion = true;
            } else if self.eat('>') {
                self.out.push_str("(?>");
                assertion = false;
            } else if self.peek() == Some('#') {
                // A comment, to the next ')'.
                while let Some(c) = self.peek() {
                    self.at += 1;
                    if c == ')' {
                        self.depth -= 1;
                        self.differs("a comment (?#…)");
                        return Ok(Some(Item::Assertion));
                    }
                }
                return Err(self.refuse("a comment (?#… without its ')'".to_string()));
            } else if self.peek() == Some('<') || self.peek() == Some('\'') {
                // A named group: its name only matters to back-references, which are refused.
                let close = if self.peek() == Some('<') { '>' } else { '\'' };
                self.at += 1;
                let name_start = self.at;
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.at += 1;
                }
                if self.at == name_start || !self.eat(close) {
                    return Err(self.refuse(format!("the group at character {opened_at}")));
                }
                self.out.push_str("(?:");
                assertion = false;
            } else {
                // Options: (?imx-imx) for the rest of the group, or (?imx-imx:…).
                let mut on = true;
                let mut set = String::new();
                loop {
                    match self.peek() {
                        Some('-') if on => on = false,
                        Some('i') => inner.case_insensitive = on,
                        Some('m') => {
                            inner.dot_all = on;
                            self.differs("the option 'm' (in Oniguruma: '.' matches \"\\n\")");
                        }
                        Some(':') | Some(')') => break,
                        Some(c) => {
                            return Err(self.refuse(format!(
                                "the group or option '(?{set}{c}' at character {opened_at} (bytepair takes the \
                                 options i and m, and the groups (?:…) (?=…) (?!…) (?<=…) (?<!…) (?>…) (?<name>…))"
                            )));
                        }
                        None => return Err(self.refuse(format!("an unclosed group at character {opened_at}"))),
                    }
                    set.push(self.chars[self.at]);
                    self.at += 1;
                }
                let options = option_text(inner);
                if self.eat(')') {
                    if !at_sequence_start {
                        self.differs(
                            "an option in the middle of a group (in Oniguruma it covers the alternatives after it)",
                        );
                    }
                    self.out.push_str(&format!("(?{options}:"));
                    self.alternation(inner, false)?;
                    self.out.push(')');
                    self.depth -= 1;
                    return Ok(None);
                }
                self.at += 1; // ':'
                self.out.push_str(&format!("(?{options}:"));
                assertion = false;
            }
        } else {
            self.out.push_str("(?:");
            assertion = false;
        }
        self.alternation(inner, false)?;
        if !self.eat(')') {
            return Err(self.refuse(format!("an unclosed group at character {opened_at}")));
        }
        self.out.push(')');
        self.depth -= 1;
        Ok(Some(if assertion { Item::Assertion } else { Item::Repeatable(start) }))
    }

    /// An escape outside a class.
    fn escape(&mut self, flags: Flags, start: usize) -> Result<Item, String> {
        self.at += 1;
        let Some(c) = self.peek() else {
            return Err(self.refuse("a '\\' at the end".to_string()));
        };
        self.at += 1;
        if let Some(literal) = self.escaped_literal(c)? {
            self.literal(literal, flags)?;
            return Ok(Item::Repeatable(start));
        }
        self.previous_literal = None;
        match c {
            'd' | 'D' | 's' | 'S' | 'h' | 'H' | 'w' | 'W' => {
                let (body, negated) = self.class_escape(c, false);
                self.out.push_str(if negated { "[^" } else { "[" });
                self.out.push_str(&body);
                self.out.push(']');
                Ok(Item::Repeatable(start))
            }
            'p' | 'P' => {
                let (body, negated) = self.property(c == 'P', flags, false)?;
                self.out.push_str(if negated { "[^" } else { "[" });
                self.out.push_str(&body);
                self.out.push(']');
                Ok(Item::Repeatable(start))
            }
            'b' | 'B' => {
                self.differs("'\\b' (a boundary of Oniguruma's \\w)");
                let word = format!("[{WORD}]");
                self.out.push_str(&if c == 'b' {
                    format!("(?:(?<={word})(?!{word})|(?<!{word})(?={word}))")
                } else {
                    format!("(?:(?<={word})(?={word})|(?<!{word})(?!{word}))")
                });
                Ok(Item::Assertion)
            }
            'A' => {
                self.out.push_str(r"\A");
                Ok(Item::Assertion)
            }
            'z' => {
                self.out.push_str(r"\z");
                Ok(Item::Assertion)
            }
            'Z' => {
                self.differs("'\\Z'");
                self.out.push_str(r"(?=\n?\z)");
                Ok(Item::Assertion)
            }
            _ => Err(self.refuse(format!("'\\{c}'{}", escape_hint(c)))),
        }
    }

    /// The character an escape stands for, if it stands for one (`\n`, `\x41`, `\u00e9`, `\.`); None for a class
    /// or an assertion. `c` is the character after the backslash (already consumed).
    fn escaped_literal(&mut self, c: char) -> Result<Option<char>, String> {
        let hex = |t: &mut Translator, max: usize| -> String {
            let start = t.at;
            while t.at - start < max && t.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                t.at += 1;
            }
            t.chars[start..t.at].iter().collect()
        };
        let code = |t: &Translator, digits: &str| -> Result<char, String> {
            u32::from_str_radix(digits, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| t.refuse(format!("the escape for code point {digits:?} (not a character)")))
        };
        Ok(Some(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0C',
            'v' => '\x0B',
            'a' => '\x07',
            'e' => '\x1B',
            'x' => {
                let digits = if self.eat('{') {
                    let digits = hex(self, 8);
                    if !self.eat('}') || digits.is_empty() {
                        return Err(self.refuse("a '\\x{…}' escape that is not hex digits in braces".to_string()));
                    }
                    digits
                } else {
                    hex(self, 2)
                };
                if digits.is_empty() {
                    return Err(self.refuse("'\\x' without hex digits".to_string()));
                }
                code(self, &digits)?
            }
            'u' => {
                let digits = hex(self, 4);
                if digits.len() != 4 {
                    return Err(self.refuse("a '\\u' escape without four hex digits".to_string()));
                }
                code(self, &digits)?
            }
            c if c.is_ascii_alphanumeric() => return Ok(None),
            c => {
                if c == '<' || c == '>' || (c.is_ascii() && !regex_syntax::is_escapeable_character(c)) {
                    self.differs(&format!("'\\{c}' (the literal {c} in Oniguruma)"));
                }
                c
            }
        }))
    }

    /// A class escape (`\d`, `\W`, …) as a class body, and whether the class is its complement.
    fn class_escape(&mut self, c: char, in_class: bool) -> (String, bool) {
        let body = match c.to_ascii_lowercase() {
            'd' => r"\p{Nd}".to_string(),
            's' => r"\p{White_Space}".to_string(),
            'h' => {
                self.differs("'\\h' (a hex digit in Oniguruma)");
                "0-9A-Fa-f".to_string()
            }
            _ => {
                self.differs("'\\w' (Oniguruma's takes ² ³ ¹ ¼ ½ ¾ and not the zero-width joiners)");
                if in_class { WORD_IN_CLASS } else { WORD }.to_string()
            }
        };
        (body, c.is_ascii_uppercase())
    }

    /// `\p{Name}`, `\p{^Name}` or `\P{Name}` (the `p`/`P` consumed) as a class body and whether it is negated.
    fn property(&mut self, upper: bool, flags: Flags, in_class: bool) -> Result<(String, bool), String> {
        if !self.eat('{') {
            return Err(self.refuse("'\\p' without braces (Oniguruma reads \\pL as the letters p and L)".to_string()));
        }
        let caret = self.eat('^');
        let start = self.at;
        while self.peek().is_some_and(|c| c != '}') {
            self.at += 1;
        }
        let name: String = self.chars[start..self.at].iter().collect();
        if !self.eat('}') {
            return Err(self.refuse("a '\\p{' without its '}'".to_string()));
        }
        if flags.case_insensitive {
            return Err(self.refuse(format!(
                "\\p{{{name}}} in a case-insensitive part (Oniguruma does not fold properties; bytepair's engine does)"
            )));
        }
        if caret {
            self.differs("'\\p{^…}'");
        }
        let key: String = name.chars().filter(|c| !matches!(c, ' ' | '_' | '-')).flat_map(char::to_lowercase).collect();
        // Oniguruma's POSIX-like properties, as it defines them (not all Unicode ones by those names).
        let body = match key.as_str() {
            "word" => Some(if in_class { WORD_IN_CLASS } else { WORD }),
            "alnum" => Some(r"\p{Alphabetic}\p{Nd}"),
            "alpha" => Some(r"\p{Alphabetic}"),
            "punct" => Some(r"\p{P}"),
            "digit" => Some(r"\p{Nd}"),
            "upper" => Some(r"\p{Uppercase}"),
            "lower" => Some(r"\p{Lowercase}"),
            "space" => Some(r"\p{White_Space}"),
            "xdigit" => Some("0-9A-Fa-f"),
            "cntrl" => Some(r"\p{Cc}"),
            "blank" => Some(r"\p{Zs}\t"),
            "ascii" => Some(r"\x{0}-\x{7F}"),
            "graph" | "print" => {
                return Err(self.refuse(format!("\\p{{{name}}} (its Oniguruma definition is not reproduced)")));
            }
            _ => None,
        };
        let body = match body {
            Some(body) => {
                self.differs(&format!("\\p{{{name}}} (Oniguruma's own definition)"));
                body.to_string()
            }
            None => {
                // A Unicode general category, script or binary property: the same tables in both engines.
                if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(self.refuse(format!("the property name {}", py_repr(&name))));
                }
                let body = format!(r"\p{{{key}}}");
                if regex_syntax::Parser::new().parse(&body).is_err() {
                    return Err(self.refuse(format!("the property \\p{{{name}}} (unknown to bytepair)")));
                }
                body
            }
        };
        Ok((body, upper != caret))
    }

    /// A class at `[`, written as one.
    fn class(&mut self, flags: Flags) -> Result<(), String> {
        let opened_at = self.at;
        self.at += 1;
        self.deeper()?;
        let negated = self.eat('^');
        self.out.push_str(if negated { "[^" } else { "[" });
        let mut items = 0; // items since the class opened or the last `&&`
        let mut first = true;
        // The last item was a single character (a possible range start), or a completed range.
        let mut last_char: Option<char> = None;
        let mut after_range = false;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.refuse(format!("an unclosed class at character {opened_at}")));
            };
            if c == ']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            if c == '&' && self.peek_at(1) == Some('&') {
                if items == 0 {
                    return Err(self.refuse("'&&' with nothing on its left in a class".to_string()));
                }
                self.at += 2;
                self.out.push_str("&&");
                items = 0;
                last_char = None;
                after_range = false;
                if self.peek() == Some(']') {
                    return Err(self.refuse("'&&' with nothing on its right in a class".to_string()));
                }
                continue;
            }
            if c == '-' && (last_char.is_some() || after_range) && self.peek_at(1) != Some(']') {
                if after_range {
                    // `[a-c-e]`: Oniguruma takes the '-' as a literal.
                    self.at += 1;
                    self.class_literal('-', flags)?;
                    after_range = false;
                    items += 1;
                    continue;
                }
                self.at += 1;
                let low = last_char.take().expect("checked");
                let Some(high) = self.class_char(flags)? else {
                    return Err(
                        self.refuse(format!("a range in the class at character {opened_at} that ends in a class"))
                    );
                };
                if high < low {
                    return Err(self.refuse(format!("the reversed range {low}-{high}")));
                }
                if flags.case_insensitive && !high.is_ascii() {
                    return Err(self.refuse("a non-ASCII range in a case-insensitive class".to_string()));
                }
                self.out.push('-');
                push_char(&mut self.out, high);
                after_range = true;
                continue;
            }
            if c == '-' && !first && last_char.is_none() && !after_range && items > 0 && self.peek_at(1) != Some(']') {
                return Err(self.refuse(format!("a '-' after a class inside the class at character {opened_at}")));
            }
            after_range = false;
            items += 1;
            if c == '[' && self.peek_at(1) == Some(':') {
                self.posix_class()?;
                last_char = None;
                continue;
            }
            if c == '[' {
                self.class(flags)?;
                last_char = None;
                continue;
            }
            match self.class_char(flags)? {
                Some(literal) => {
                    self.class_literal(literal, flags)?;
                    last_char = Some(literal);
                }
                None => last_char = None,
            }
        }
        if items == 0 {
            return Err(self.refuse(format!("the empty class at character {opened_at}")));
        }
        self.out.push(']');
        self.depth -= 1;
        Ok(())
    }

    /// One element of a class that is not a nested class: the character it stands for, or None when it was a
    /// class escape (`\w`, `\p{..}`), which is written out here.
    fn class_char(&mut self, flags: Flags) -> Result<Option<char>, String> {
        let c = self.peek().ok_or_else(|| self.refuse("an unclosed class".to_string()))?;
        self.at += 1;
        if c != '\\' {
            return Ok(Some(c));
        }
        let e = self.peek().ok_or_else(|| self.refuse("a '\\' at the end".to_string()))?;
        self.at += 1;
        if e == 'b' {
            return Err(self.refuse("'\\b' in a class (a backspace in Oniguruma)".to_string()));
        }
        if let Some(literal) = self.escaped_literal(e)? {
            return Ok(Some(literal));
        }
        let (body, negated) = match e {
            'd' | 'D' | 's' | 'S' | 'h' | 'H' | 'w' | 'W' => self.class_escape(e, true),
            'p' | 'P' => self.property(e == 'P', flags, true)?,
            _ => return Err(self.refuse(format!("'\\{e}' in a class{}", escape_hint(e)))),
        };
        if negated {
            self.out.push_str(&format!("[^{body}]"));
        } else {
            self.out.push_str(&body);
        }
        Ok(None)
    }

    fn class_literal(&mut self, c: char, flags: Flags) -> Result<(), String> {
        if flags.case_insensitive && !c.is_ascii() {
            return Err(
                self.refuse(format!("the non-ASCII character {} in a case-insensitive class", py_repr(&c.to_string())))
            );
        }
        push_char(&mut self.out, c);
        Ok(())
    }

    /// `[:name:]` or `[:^name:]` inside a class.
    fn posix_class(&mut self) -> Result<(), String> {
        let start = self.at;
        self.at += 2;
        let negated = self.eat('^');
        let name_start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.at += 1;
        }
        let name: String = self.chars[name_start..self.at].iter().collect();
        if !self.eat_str(":]") {
            return Err(self.refuse(format!("the class at character {start} ('[:' that is not a POSIX class)")));
        }
        let body = match name.as_str() {
            "alpha" => r"\p{Alphabetic}",
            "alnum" => r"\p{Alphabetic}\p{Nd}",
            "digit" => r"\p{Nd}",
            "upper" => r"\p{Uppercase}",
            "lower" => r"\p{Lowercase}",
            "space" => r"\p{White_Space}",
            "punct" => r"\p{P}\p{S}",
            "word" => r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}",
            "xdigit" => "0-9A-Fa-f",
            "cntrl" => r"\p{Cc}",
            "blank" => r"\p{Zs}\t",
            "ascii" => r"\x{0}-\x{7F}",
            _ => return Err(self.refuse(format!("the POSIX class [:{name}:]"))),
        };
        self.differs(&format!("[:{name}:] (Unicode in Oniguruma, ASCII in fancy-regex)"));
        if negated {
            self.out.push_str(&format!("[^{body}]"));
        } else {
            self.out.push_str(body);
        }
        Ok(())
    }
}

/// The inline options for `flags` (`i`, `s`, or their negations), as fancy-regex writes them.
fn option_text(flags: Flags) -> String {
    let mut on = String::new();
    let mut off = String::new();
    for (set, letter) in [(flags.case_insensitive, 'i'), (flags.dot_all, 's')] {
        if set { on.push(letter) } else { off.push(letter) }
    }
    if off.is_empty() { on } else { format!("{on}-{off}") }
}

/// `c` as a literal in a regex or a class: ASCII punctuation and controls by their hex code (always a literal,
/// in or out of a class), anything else as it is.
fn push_char(out: &mut String, c: char) {
    if c.is_ascii() && !c.is_ascii_alphanumeric() || c.is_control() || c.is_whitespace() {
        out.push_str(&format!(r"\x{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// What an unsupported escape is in Oniguruma, when it is something.
fn escape_hint(c: char) -> &'static str {
    match c {
        '1'..='9' | 'k' | 'g' => " (a back-reference or subroutine call)",
        '0' | 'o' => " (an octal escape: write \\x{..})",
        'c' | 'C' | 'M' => " (a control or meta escape: write \\x{..})",
        'K' => " (keep: sets the start of the match)",
        'G' => " (the end of the previous match)",
        'R' => " (any line break)",
        'X' => " (a grapheme cluster)",
        'N' | 'O' => " (a dot with or without newlines)",
        'y' | 'Y' => " (a grapheme boundary)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(regex: &str) -> String {
        translate(regex).unwrap_or_else(|e| panic!("{e}")).regex
    }

    fn pieces(onig: &str, text: &str) -> Vec<String> {
        let regex = fancy_regex::Regex::new(&rewritten(onig)).unwrap();
        regex.find_iter(text).map(|m| m.unwrap().as_str().to_string()).collect()
    }

    #[test]
    fn anchors_are_line_anchors() {
        assert_eq!(pieces(r"\n^", "a\n"), Vec::<String>::new());
        assert_eq!(pieces(r"\n^", "a\n\nb"), ["\n", "\n"]);
        assert_eq!(pieces(r"a$", "a\nb a"), ["a", "a"]);
        assert_eq!(pieces(r"^a", "b\na"), ["a"]);
        assert_eq!(pieces(r"b\Z", "ab\n"), ["b"]);
    }

    #[test]
    fn repeats_read_as_oniguruma_reads_them() {
        assert_eq!(pieces(r"\p{N}{1,3}+", "12345 6"), ["12345", "6"]);
        assert_eq!(pieces(r"ba{2}?", "ba baa"), ["b", "baa"]);
        assert_eq!(pieces(r"a{1,2}?", "aa"), ["a", "a"]);
        assert_eq!(pieces(r"a{2}{2}", "aaaaa"), ["aaaa"]);
        assert_eq!(pieces(r"a?+b|a", "ab"), ["ab"]);
        assert_eq!(pieces(r"a{,2}", "aaa"), ["aa", "a"]);
        assert_eq!(pieces(r"a{x}|{", "a{x} {"), ["a{x}", "{"]);
    }

    #[test]
    fn an_option_in_a_group_takes_the_alternatives_after_it() {
        assert_eq!(pieces(r"ab(?i)c|def", "abC DEF abdef"), ["abC", "abdef"]);
        assert_eq!(pieces(r"(?i)a|b", "A B"), ["A", "B"]);
        assert_eq!(pieces(r"(?:a(?i)b|c)d", "aBd Cd cD"), ["aBd"]);
        assert_eq!(pieces(r"(?m:.)+", "a\nb"), ["a\nb"]);
        assert_eq!(translate(r"(?i)'s|'t").unwrap().differs, None);
    }

    #[test]
    fn classes_are_oniguruma_classes() {
        assert_eq!(pieces(r"\w+", "a\u{200C}b²c"), ["a", "b²c"]);
        assert_eq!(pieces(r"[[:punct:]]+", "a$!+é"), ["$!+"]);
        assert_eq!(pieces(r"[a-c-e]+", "d-e"), ["-e"]);
        assert_eq!(pieces(r"[]a]+", "]a b"), ["]a"]);
        assert_eq!(pieces(r"[\w&&\D]+", "ab12"), ["ab"]);
        assert_eq!(pieces(r"\h+", "a1gF"), ["a1", "F"]);
        assert_eq!(pieces(r"x\b", "x\u{200C} x²"), ["x"]);
        assert_eq!(pieces(r"[^(\s|[.,!?…。])]+", "ab, c|d."), ["ab", "c", "d"]);
    }

    #[test]
    fn escaped_punctuation_is_a_literal() {
        assert_eq!(pieces(r"\<\w+\>", "<ab>"), ["<ab>"]);
        assert_eq!(translate(r"\<").unwrap().differs.as_deref(), Some("'\\<' (the literal < in Oniguruma)"));
        assert_eq!(pieces(r"\x41\u0042\x{43}\.", "ABC."), ["ABC."]);
    }

    #[test]
    fn regexes_both_read_alike_are_said_to() {
        for regex in [
            r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
            r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"(?=[A-Z])",
            r"\s*",
            r"[一-龥぀-ゟ゠-ヿ]+",
        ] {
            assert_eq!(translate(regex).unwrap().differs, None, "{regex}");
        }
        for (regex, first) in
            [(r"\b", "\\b"), (r"a$", "'$'"), (r"\p{N}{1,3}+", "{n,m}+"), (r"[[:alpha:]]", "[:alpha:]")]
        {
            let differs = translate(regex).unwrap().differs.unwrap();
            assert!(differs.contains(first), "{regex}: {differs}");
        }
    }

    #[test]
    fn what_cannot_be_kept_exact_is_refused_by_name() {
        for (regex, named) in [
            (r"(a)\1", "'\\1' (a back-reference"),
            (r"(?x) a", "'(?x'"),
            (r"\K", "keep"),
            (r"(?i)ss", "'ss' in a case-insensitive part"),
            (r"(?i)(?:s)t", "'st' in a case-insensitive part"),
            (r"(?i)é", "non-ASCII character 'é'"),
            (r"(?i)\p{Lu}", "\\p{Lu} in a case-insensitive part"),
            (r"\pL", "'\\p' without braces"),
            (r"[[:print:]]", "POSIX class [:print:]"),
            (r"a{2,1}", "counts reversed"),
            (r"a{1001}", "above 1000"),
            (r"^*", "quantifier after an anchor"),
            (r"[a&&]", "nothing on its right"),
            (r"(?~ab)", "'(?~'"),
            (r"\p{Klingon}", "unknown to bytepair"),
            (r"[b-a]", "reversed range"),
            (r"a)", "unmatched ')'"),
            (r"(a", "unclosed group"),
            (r"[a", "unclosed class"),
            (r"\xg", "'\\x' without hex digits"),
        ] {
            let message = translate(regex).unwrap_err();
            assert!(message.contains(named), "{regex}: {message}");
            assert!(message.contains("cannot run exactly as HF tokenizers"), "{message}");
        }
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(translate(&deep).unwrap_err().contains("nested more than 200 deep"));
    }
}
