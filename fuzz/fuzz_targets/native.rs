//! bytepair's own JSON files: any bytes load or are refused with an error (never a panic); what loads saves,
//! and the saved file loads back to the same tokenizer.
#![no_main]

use bytepair::formats::native;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(tok) = native::load(text, "fuzz.json") else { return };
    common::use_it(&tok, data);
    let saved = native::save(&tok);
    let again = native::load(&saved, "saved.json").expect("a saved file loads");
    assert_eq!(common::content(&again), common::content(&tok), "saved and loaded back differs");
});
