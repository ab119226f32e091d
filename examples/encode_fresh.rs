//! The core's encoding speed on text it has not seen, without Python: a development tool for the kernel.
//!
//!     cargo run --release --example encode_fresh -- ENCODING [MEGABYTES] [STAGE]
//!
//! ENCODING is r50k_base, p50k_base, cl100k_base or o200k_base (rank files from `../shared/data/tiktoken`, or
//! `$BYTEPAIR_SHARED_DATA`). Reads 2 × MEGABYTES (default 4) of the Gutenberg English books and cuts them into
//! ~4 KB documents (each copied into a string of its own), then, in this process: loads the tokenizer (timed
//! apart), encodes the first half's documents one by one (cold: the first pass after loading), then the second
//! half's (steady: fresh text, tables warmed on the first), then the second half again (same text: shown, never
//! the headline). STAGE `split` times the pre-tokenizer alone (every piece counted), `encode` (default) the whole
//! encoder; with `-cold` (`encode-cold`) only the first pass runs, for profiles of it. Under
//! `valgrind --tool=callgrind` give a small MEGABYTES: the instruction counts do not drift with the machine's load.
//! `TEXT_FILE=path` reads that plain text file instead of the books, `STEADY_PASSES=k` runs k steady passes on
//! slices of their own. `CORPUS=multilingual` reads the files under `multilingual/` instead (the documents then cut at any byte
//! after 4 KB that starts a character and follows a space, else where the text ends).

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use bytepair::formats::tiktoken;
use bytepair::pretokenize::Pattern;
use bytepair::tokenizer::{SpecialPolicy, Tokenizer};

fn main() {
    let mut args = std::env::args().skip(1);
    let encoding = args.next().unwrap_or_else(|| "r50k_base".into());
    let megabytes: f64 = args.next().map_or(4.0, |arg| arg.parse().expect("MEGABYTES is a number"));
    let stage = args.next().unwrap_or_else(|| "encode".into());
    let data = std::env::var_os("BYTEPAIR_SHARED_DATA")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"), PathBuf::from);

    let steady_passes: f64 = std::env::var("STEADY_PASSES").map_or(1.0, |k| k.parse().unwrap_or(1.0));
    let want = ((1.0 + steady_passes) * megabytes * 1e6) as u64;
    let text = if std::env::var("CORPUS").is_ok_and(|corpus| corpus == "multilingual") {
        // Every file under multilingual/, in turn, up to the size asked for.
        let mut files = vec![data.join("multilingual")];
        let mut text = String::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                let mut entries: Vec<_> = std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()).collect();
                entries.sort();
                files.extend(entries.into_iter().rev());
            } else if (text.len() as u64) < want {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
        text
    } else if let Some(path) = std::env::var_os("TEXT_FILE") {
        // A plain text file (decompressing the books dominated profiles of the whole run).
        let mut bytes = Vec::new();
        std::fs::File::open(path).unwrap().take(want).read_to_end(&mut bytes).unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        let path = data.join("text/gutenberg_en/gutenberg_en_books.txt.gz");
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(file).take(want).read_to_end(&mut bytes).unwrap();
        String::from_utf8_lossy(&bytes).replace("<|endoftext|>", "")
    };
    // Each document a string of its own, as Python's are. As slices of one string, the text's loads stalled
    // where Python's did not: a prefetch of the text ahead gave +2–9 % here and nothing in Python (+2–5 % here
    // with separate strings: closer, not the same; judge memory-bound changes in Python too).
    let owned: Vec<String> = documents(&text).into_iter().map(String::from).collect();
    drop(text);
    let docs: Vec<&str> = owned.iter().map(String::as_str).collect();
    // `STEADY_PASSES=k`: k steady passes, each over a slice of its own (the text is cut into k + 1 slices), so
    // that a profile of the whole run is mostly steady passes.
    let steady: usize = std::env::var("STEADY_PASSES").map_or(1, |k| k.parse().expect("STEADY_PASSES is a number"));
    let per_slice = docs.len() / (steady + 1);
    if per_slice == 0 {
        eprintln!("the text makes {} documents: too few for {} slices (give more megabytes)", docs.len(), steady + 1);
        std::process::exit(2);
    }
    let (first, second) = docs.split_at(per_slice);

    let pattern = match encoding.as_str() {
        "r50k_base" | "p50k_base" => Pattern::Gpt2,
        "cl100k_base" => Pattern::Cl100k,
        "o200k_base" => Pattern::O200k,
        other => panic!("unknown encoding {other}"),
    };
    let started = Instant::now();
    let rank_file = data.join(format!("tiktoken/{encoding}.tiktoken"));
    let tok = tiktoken::load(rank_file.to_str().unwrap(), pattern, &[]).unwrap();
    tok.prepare();
    println!(
        "{encoding}: loaded in {:.3} s; {} + {} documents",
        started.elapsed().as_secs_f64(),
        first.len(),
        second.len()
    );

    let mut passes: Vec<(&str, &[&str])> = vec![("cold", first)];
    if !stage.ends_with("-cold") {
        passes.extend(second.chunks(per_slice).take(steady).map(|slice| ("steady", slice)));
        passes.push(("same text", &second[..per_slice]));
    }
    for (what, docs) in passes {
        let mb = docs.iter().map(|d| d.len()).sum::<usize>() as f64 / 1e6;
        let started = Instant::now();
        let split = stage.trim_end_matches("-cold") == "split";
        let count = match what {
            "cold" => pass_cold(&tok, docs, split),
            "steady" => pass_steady(&tok, docs, split),
            _ => pass_same(&tok, docs, split),
        };
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{what:>10}: {:>7.1} MB/s ({count} {})",
            mb / seconds,
            if stage == "split" { "pieces" } else { "ids" }
        );
    }
}

// One function per pass, so that `callgrind --toggle-collect=encode_fresh::pass_steady` profiles one of them.
#[inline(never)]
fn pass_cold(tok: &Tokenizer, docs: &[&str], split: bool) -> usize {
    std::hint::black_box(0); // (three distinct functions: identical ones are merged)
    if split { split_all(tok, docs) } else { encode_all(tok, docs) }
}

#[inline(never)]
fn pass_steady(tok: &Tokenizer, docs: &[&str], split: bool) -> usize {
    std::hint::black_box(1); // (three distinct functions: identical ones are merged)
    if split { split_all(tok, docs) } else { encode_all(tok, docs) }
}

#[inline(never)]
fn pass_same(tok: &Tokenizer, docs: &[&str], split: bool) -> usize {
    std::hint::black_box(2); // (three distinct functions: identical ones are merged)
    if split { split_all(tok, docs) } else { encode_all(tok, docs) }
}

#[inline(never)]
fn encode_all(tok: &Tokenizer, docs: &[&str]) -> usize {
    let policy = SpecialPolicy { allowed: Vec::new(), disallowed: Vec::new() };
    docs.iter().map(|d| tok.encode(d, &policy).unwrap().len()).sum()
}

#[inline(never)]
fn split_all(tok: &Tokenizer, docs: &[&str]) -> usize {
    let mut count = 0;
    for d in docs {
        tok.pretokenizer.split(d, |_| count += 1).unwrap();
    }
    count
}

/// ~4 KB documents, each ending before the first space at or after 4096 bytes.
fn documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 4096).min(text.len());
        // At a space, or a little further on in text without spaces (random letters, base64).
        while end < text.len()
            && ((text.as_bytes()[end] != b' ' && end - start < 4096 + 512) || !text.is_char_boundary(end))
        {
            end += 1;
        }
        docs.push(&text[start..end]);
        start = end;
    }
    docs
}
