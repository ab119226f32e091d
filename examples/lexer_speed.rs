//! Speed of the hand-written pre-tokenizers against fancy-regex on the same patterns.
//!
//!     cargo run --release --example lexer_speed [MEGABYTES]
//!
//! Reads the first MEGABYTES (default 20) of the Gutenberg English books, then all the multilingual files, from
//! `../shared/data` (or `$BYTEPAIR_SHARED_DATA`); splits each single-threaded with each splitter and with fancy-regex, checks that
//! both give the same number of pieces, and prints MB/s (best of three runs; fancy-regex runs once).

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use bytepair::pretokenize::{CL100K, GPT2, O200K, WHITESPACE, lexer};

fn main() {
    let megabytes: usize = std::env::args().nth(1).map_or(20, |arg| arg.parse().expect("MEGABYTES is a number"));
    let data = std::env::var_os("BYTEPAIR_SHARED_DATA")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"), PathBuf::from);

    // The first split builds the character class table from regex-syntax's Unicode tables.
    let started = Instant::now();
    lexer::split_gpt2("", &mut |_: &str| ());
    println!("class table built in {:.1} ms", started.elapsed().as_secs_f64() * 1e3);

    let path = data.join("text/gutenberg_en/gutenberg_en_books.txt.gz");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file).take((megabytes << 20) as u64).read_to_end(&mut bytes).unwrap();
    measure(&format!("the first {megabytes} MiB of {}", path.display()), &String::from_utf8_lossy(&bytes));

    // Many scripts, so mostly the non-ASCII path: every file under multilingual/, concatenated.
    let mut files = vec![data.join("multilingual")];
    let mut text = String::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    measure(&format!("all of {}", data.join("multilingual").display()), &text);
}

fn measure(what: &str, text: &str) {
    let mb = text.len() as f64 / 1e6;
    println!("\n{mb:.1} MB: {what}");
    type Splitter = fn(&str, &mut usize);
    let splitters: [(&str, &str, Splitter); 4] = [
        ("gpt2", GPT2, |text, count| lexer::split_gpt2(text, &mut |_: &str| *count += 1)),
        ("cl100k", CL100K, |text, count| lexer::split_cl100k(text, &mut |_: &str| *count += 1)),
        ("o200k", O200K, |text, count| lexer::split_o200k(text, &mut |_: &str| *count += 1)),
        ("whitespace", WHITESPACE, |text, count| lexer::split_whitespace(text, &mut |_: &str| *count += 1)),
    ];
    println!("{:<11} {:>10} {:>12} {:>8} {:>12}", "pattern", "lexer MB/s", "fancy MB/s", "speedup", "pieces");
    for (name, pattern, split) in splitters {
        let mut best = f64::INFINITY;
        let mut pieces = 0;
        for _ in 0..3 {
            let started = Instant::now();
            pieces = 0;
            split(text, &mut pieces);
            best = best.min(started.elapsed().as_secs_f64());
        }
        let regex = fancy_regex::Regex::new(pattern).unwrap();
        let started = Instant::now();
        let regex_pieces = regex.find_iter(text).filter(|m| !m.as_ref().unwrap().as_str().is_empty()).count();
        let regex_seconds = started.elapsed().as_secs_f64();
        assert_eq!(pieces, regex_pieces, "{name}: the lexer and fancy-regex disagree");
        println!(
            "{name:<11} {:>10.0} {:>12.1} {:>7.0}x {pieces:>12}",
            mb / best,
            mb / regex_seconds,
            regex_seconds / best
        );
    }
}
