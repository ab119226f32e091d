//! tiktoken rank files: any bytes load or are refused with an error (never a panic); what loads saves, and
//! the saved file loads back to the same tokenizer.
#![no_main]

use bytepair::formats::tiktoken;
use bytepair::pretokenize::Pattern;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let specials = [("<|endoftext|>".to_string(), 100_000)];
    let Ok(tok) = tiktoken::load_str(text, "fuzz.tiktoken", Pattern::Gpt2, &specials) else { return };
    common::use_it(&tok, data);
    let Ok(saved) = tiktoken::save(&tok) else { return };
    let again = tiktoken::load_str(&saved, "saved.tiktoken", Pattern::Gpt2, &specials).expect("a saved file loads");
    assert_eq!(common::content(&again), common::content(&tok), "saved and loaded back differs");
});
