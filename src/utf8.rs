//! UTF-8 from the fixed-width storages of Python's str (PEP 393): Latin-1, UCS-2 and UCS-4, for the bindings,
//! which read a str from its own storage rather than through the UTF-8 copy CPython would keep in it (see
//! `bindings/text.rs`).
//!
//! Performance notes: the size of the UTF-8 is counted first, so the output is allocated once at its size (a
//! worst-case capacity, 3 bytes per UCS-2 unit, left pages of slack per text); UCS-2 text copies runs of ASCII
//! four units at a time, so English with a few curly quotes (stored as UCS-2) is mostly a copy. Encoding speed
//! did not move in alternated runs (20 MB of English and 23 MB of multilingual documents, per document and in
//! batches, 1 and 2 threads): the transcoding is a few percent of encoding, as CPython's was. A lone surrogate,
//! which has no UTF-8, is left to CPython, which raises its usual `UnicodeEncodeError`.

/// Latin-1 (every character below U+0100) as UTF-8.
pub fn from_latin1(latin1: &[u8]) -> String {
    let mut out = Vec::with_capacity(latin1.len() + latin1.iter().filter(|&&b| b >= 0x80).count());
    let mut rest = latin1;
    while !rest.is_empty() {
        let ascii = rest.iter().position(|&b| b >= 0x80).unwrap_or(rest.len());
        out.extend_from_slice(&rest[..ascii]);
        rest = &rest[ascii..];
        if let Some((&b, after)) = rest.split_first() {
            out.extend_from_slice(&[0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
            rest = after;
        }
    }
    // SAFETY: ASCII bytes and two-byte sequences of code points 0x80-0xFF are UTF-8.
    unsafe { String::from_utf8_unchecked(out) }
}

/// UCS-2 (code points below U+10000, each one unit) as UTF-8; None at a surrogate.
pub fn from_ucs2(units: &[u16]) -> Option<String> {
    // Sized exactly (a surrogate counts 3, and stops the copy below).
    let size: usize = units.iter().map(|&u| 1 + usize::from(u >= 0x80) + usize::from(u >= 0x800)).sum();
    let mut out = Vec::with_capacity(size);
    let mut i = 0;
    while i < units.len() {
        // Four ASCII units at a time.
        while i + 4 <= units.len() {
            let [a, b, c, d] = [units[i], units[i + 1], units[i + 2], units[i + 3]];
            if (a | b | c | d) >= 0x80 {
                break;
            }
            out.extend_from_slice(&[a as u8, b as u8, c as u8, d as u8]);
            i += 4;
        }
        let Some(&unit) = units.get(i) else { break };
        i += 1;
        match unit {
            0..=0x7F => out.push(unit as u8),
            0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (unit >> 6) as u8, 0x80 | (unit & 0x3F) as u8]),
            0xD800..=0xDFFF => return None,
            _ => out.extend_from_slice(&[
                0xE0 | (unit >> 12) as u8,
                0x80 | ((unit >> 6) & 0x3F) as u8,
                0x80 | (unit & 0x3F) as u8,
            ]),
        }
    }
    // SAFETY: each unit was written as the UTF-8 of its code point, surrogates excluded.
    Some(unsafe { String::from_utf8_unchecked(out) })
}

/// UCS-4 (one unit per code point) as UTF-8; None at a surrogate (or a unit that is no code point).
pub fn from_ucs4(units: &[u32]) -> Option<String> {
    let size: usize = units.iter().map(|&u| char::from_u32(u).map_or(0, char::len_utf8)).sum();
    let mut out = String::with_capacity(size);
    for &unit in units {
        out.push(char::from_u32(unit)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code point below U+10000 but the surrogates, in UCS-2 and UCS-4, and every Latin-1 character,
    /// transcode to what Rust's own encoding gives; runs of ASCII of every length and alignment too.
    #[test]
    fn the_transcoders_agree_with_rust() {
        let bmp: Vec<char> = (0..0x10000u32).filter_map(char::from_u32).collect();
        let text: String = bmp.iter().collect();
        let ucs2: Vec<u16> = bmp.iter().map(|&c| c as u32 as u16).collect();
        assert_eq!(from_ucs2(&ucs2).as_deref(), Some(text.as_str()));
        let ucs4: Vec<u32> = text.chars().chain(['\u{10000}', '\u{10FFFF}']).map(|c| c as u32).collect();
        let with_astral: String = text.chars().chain(['\u{10000}', '\u{10FFFF}']).collect();
        assert_eq!(from_ucs4(&ucs4).as_deref(), Some(with_astral.as_str()));
        let latin1: Vec<u8> = (0..=255u8).collect();
        assert_eq!(from_latin1(&latin1), (0..=255u8).map(char::from).collect::<String>());
        for n in 0..12 {
            for offset in 0..4 {
                let mixed: String = "é".repeat(offset) + &"a".repeat(n) + "“" + &"b".repeat(n);
                let units: Vec<u16> = mixed.chars().map(|c| c as u32 as u16).collect();
                assert_eq!(from_ucs2(&units).as_deref(), Some(mixed.as_str()));
                let bytes: Vec<u8> =
                    "é".repeat(offset).chars().chain("ab".repeat(n).chars()).map(|c| c as u8).collect();
                let expected: String = bytes.iter().map(|&b| char::from(b)).collect();
                assert_eq!(from_latin1(&bytes), expected);
            }
        }
    }

    #[test]
    fn surrogates_have_no_utf8() {
        assert_eq!(from_ucs2(&[0x61, 0xD800, 0x62]), None);
        assert_eq!(from_ucs2(&[0x61, 0x62, 0x63, 0x64, 0xDFFF]), None);
        assert_eq!(from_ucs4(&[0x61, 0xDC00]), None);
        assert_eq!(from_ucs4(&[0x110000]), None);
    }
}
