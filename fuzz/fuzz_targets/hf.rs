//! HF tokenizer.json files: any bytes load or are refused with an error (never a panic); what loads saves, and
//! the saved file loads back to the same tokenizer.
#![no_main]

use bytepair::formats::hf;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(tok) = hf::load_str(text, "fuzz.json") else { return };
    common::use_it(&tok, data);
    let Ok(saved) = hf::save(&tok) else { return };
    let again = hf::load_str(&saved, "saved.json").expect("a saved tokenizer.json loads");
    assert_eq!(common::content(&again), common::content(&tok), "saved and loaded back differs");
});
