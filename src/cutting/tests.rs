use super::*;
use crate::tokenizer::SpecialPolicy;
use crate::train::{Alphabet, Silent, TrainConfig, train};
use crate::vocab::Mode;

/// A byte-level tokenizer trained on `words` with `pattern` and the special token `special`.
fn tokenizer_with(pattern: Pattern, words: &[(&str, u64)], vocab_size: usize, special: &str) -> Tokenizer {
    let mut config = TrainConfig::for_test(vocab_size, Mode::Byte);
    config.alphabet = Alphabet::All;
    config.unk_token = None;
    config.special_tokens = vec![special.into()];
    let trained = train(words, &config, &mut Silent).unwrap();
    Tokenizer::new(trained.vocab, pattern, false, &[special.into()]).unwrap()
}

/// A byte-level tokenizer trained on `words` with `pattern` and the special token "<|e|>".
fn tokenizer(pattern: Pattern, words: &[(&str, u64)], vocab_size: usize) -> Tokenizer {
    tokenizer_with(pattern, words, vocab_size, "<|e|>")
}

struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % n
    }
}

/// Random text from `alphabet`'s strings, with long runs of its first one (long pieces).
fn text(random: &mut Random, alphabet: &[&str], len: usize) -> String {
    let mut out = String::new();
    while out.len() < len {
        let run = if random.below(4) == 0 { 1 + random.below(400) } else { 1 };
        let s = if random.below(3) == 0 { alphabet[0] } else { alphabet[random.below(alphabet.len())] };
        for _ in 0..run {
            out.push_str(s);
        }
    }
    out
}

/// `text` read in random blocks and cut as `bytepair encode` does; the ids of each part, one after the other.
fn ids_in_parts(
    tok: &Tokenizer,
    text: &str,
    policy: &SpecialPolicy,
    sizes: CutSizes,
    random: &mut Random,
) -> (Vec<u32>, Vec<(usize, usize)>, usize) {
    let cutter = Cutter::new(tok, policy.allowed.iter().any(|a| *a) || policy.disallowed.iter().any(|d| *d), sizes);
    let mut state = CutState::default();
    let (mut ids, mut start, mut read, mut cuts, mut inside) = (Vec::new(), 0, 0, Vec::new(), 0);
    let mut largest = 0;
    while read < text.len() {
        let mut next = (read + 1 + random.below(sizes.window.max(64))).min(text.len());
        while !text.is_char_boundary(next) {
            next += 1;
        }
        read = next;
        let at = cutter.cut(tok, &mut state, &text[start..read]).unwrap();
        largest = largest.max(read - start);
        if at > 0 {
            ids.extend(tok.encode(&text[start..start + at], policy).unwrap());
            cuts.push((start + at, read));
            inside += state.left_token.is_some() as usize;
            start += at;
        }
    }
    cutter.finish(tok, &mut state, &text[start..]).unwrap();
    ids.extend(tok.encode(&text[start..], policy).unwrap());
    // Bounded: the buffered text never grew far past what forces a cut (long pieces are cut inside).
    let bound = sizes.fallback_from + 3 * cutter.sizes.window + 3 * sizes.window.max(64) + 4 * MARGIN;
    assert!(largest <= bound, "buffered {largest} bytes, bound {bound}");
    (ids, cuts, inside)
}

#[test]
fn parts_encode_to_the_ids_of_the_whole_text_in_bounded_memory() {
    let mut random = Random(17);
    let alphabets: [&[&str]; 9] = [
        &["a", "b", "ab", "c"],                     // one long piece (letters)
        &["a", " ", "b", "  ", "\n", "c"],          // words, spaces, line breaks
        &[" ", "\n", "\r\n", "a", "\t", "  \n"],    // long runs of whitespace
        &["1", "2", "3", "a", " 4"],                // digits (cut in threes by cl100k and o200k)
        &["-", "!", "a", "\n", "'s", "'"],          // punctuation, contractions
        &["a", "B", "c", "D", "é", "Ω", "'ll"],     // case changes (o200k), non-ASCII letters
        &["<|e|>", "a", "<|", "|>", " ", "e"],      // special tokens and their halves
        &["{\"a\":", "1,", "[", "]", "}", "\"b\""], // minified JSON
        &["日本", "語", "a", "、", "\u{3000}"],     // no spaces at all
    ];
    let words: Vec<(String, u64)> =
        alphabets.iter().map(|a| (text(&mut Random(3), a, 3000), 1)).chain([("hello world".into(), 1)]).collect();
    let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
    let (mut checked, mut inside) = (0, 0);
    // Each pattern with "<|e|>"; two with a special token of letters, which a letter piece runs into.
    let tokenizers = [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k, Pattern::Whitespace, Pattern::None]
        .into_iter()
        .map(|p| tokenizer(p, &words, 256 + 1 + 300))
        .chain([Pattern::Gpt2, Pattern::None].map(|p| tokenizer_with(p, &words, 256 + 1 + 300, "ca")));
    for tok in tokenizers {
        let pattern = tok.pretokenizer.pattern.clone();
        for (allowed, disallowed) in [(true, true), (false, false)] {
            let policy = SpecialPolicy { allowed: vec![allowed], disallowed: vec![disallowed] };
            for alphabet in alphabets {
                for len in [10, 200, 3000, 20_000] {
                    let text = text(&mut random, alphabet, len);
                    let whole = tok.encode(&text, &policy).unwrap();
                    for window in [1, 100] {
                        let sizes = CutSizes { fallback_from: 1 + random.below(200), window };
                        let (parts, cuts, inside_cuts) = ids_in_parts(&tok, &text, &policy, sizes, &mut random);
                        inside += inside_cuts;
                        if parts != whole {
                            for (cut, read) in cuts {
                                let around = &text[cut.saturating_sub(8)..(cut + 8).min(text.len())];
                                eprintln!("cut at {cut} (read to {read}): {around:?}");
                            }
                        }
                        assert_eq!(parts, whole, "{pattern:?} {sizes:?} {text:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 7 * 2 * 9 * 4 * 2, "{checked}");
    // Long pieces were cut inside (their junctions checked), not only between pieces.
    assert!(inside > 200, "{inside} cuts inside a piece");
}

#[test]
fn simple_cuts_are_where_the_patterns_always_end_a_piece() {
    assert_eq!(last_simple_cut("ab cd", 0), Some(2));
    assert_eq!(last_simple_cut("ab  ", 0), Some(2)); // before the run's first space only
    assert_eq!(last_simple_cut("ab\ncd", 0), Some(3)); // after the line break, before a letter
    assert_eq!(last_simple_cut("ab\r\n", 0), Some(2)); // before "\r\n" that follows a letter
    assert_eq!(last_simple_cut("!\n!", 0), None);
    assert_eq!(last_simple_cut("abcdef", 0), None);
    assert_eq!(last_simple_cut("a b c", 3), Some(3));
    assert_eq!(last_simple_cut("a b cd", 4), None);
}

#[test]
fn a_pair_that_bpe_would_merge_across_a_cut_is_an_error_not_other_ids() {
    let words = [("abababab", 5u64)];
    let tok = tokenizer(Pattern::None, &words, 256 + 1 + 3);
    let cutter = Cutter::new(&tok, false, CutSizes::default());
    let (a, b) = (tok.vocab.known_id("a"), tok.vocab.known_id("b"));
    assert!(cutter.check_pair(&tok, b, a).is_ok());
    let err = cutter.check_pair(&tok, a, b).unwrap_err();
    assert!(err.message.contains("encode the document whole"), "{}", err.message);
}

#[test]
fn a_long_piece_that_runs_into_a_special_token_of_letters_ends_there() {
    // "b" × 5000 is cut inside; the rest of it ends at the special token "ca", which a letter piece would run
    // into if special tokens were not looked for first. The cut then goes at the special token, and the text
    // after it is read in bounded pieces too (the buffered text stopped being cut and grew before).
    let words = [("bbbb cab bcb", 3u64)];
    let tok = tokenizer_with(Pattern::Gpt2, &words, 256 + 1 + 10, "ca");
    let text = format!("{}ca{}", "b".repeat(5000), "b".repeat(20_000));
    let policy = SpecialPolicy { allowed: vec![true], disallowed: vec![true] };
    let sizes = CutSizes { fallback_from: 300, window: 100 };
    let (ids, _, inside) = ids_in_parts(&tok, &text, &policy, sizes, &mut Random(1));
    assert_eq!(ids, tok.encode(&text, &policy).unwrap());
    assert!(inside > 10, "{inside}");
}
