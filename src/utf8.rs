//! UTF-8 from the fixed-width storages of Python's str (PEP 393): Latin-1, UCS-2 and UCS-4, for the bindings,
//! which read a str from its own storage rather than through the UTF-8 copy CPython would keep in it (see
//! `bindings/text.rs`).
//!
//! Performance notes (callgrind, encoding ~4 KB documents one call each with r50k; instruction counts do not
//! drift with the machine): against CPython's encoder, which did this before, 20 MB of English (mostly ASCII,
//! stored as UCS-2 or Latin-1 for a curly quote or an accent) take 28 M instructions instead of ~75 M — a run of
//! ASCII copied eight units at a time (then once an ASCII unit was met; now at every eighth unit, see below) —
//! and 7.8 MB of multilingual text 92 M instead of ~70 M: whole runs were 2.5 % fewer and 0.6 % more
//! instructions. The output has room for the longest UTF-8 the units can make (3 bytes per UCS-2 unit): sizing
//! it exactly first took a third more instructions, and the text is freed when its call returns. Trying the
//! eight-unit copy at every unit, not only after an ASCII one, cost multilingual text 70 % more in this function
//! (the branch-free loop below tries it once per eight units).
//!
//! A str a process made a while ago is in no cache, and this loop reads it faster than the hardware prefetcher
//! fetches it: perf put 44 % of this function's samples on the first use of a loaded unit (r50k, ~4 KB English
//! documents, a quarter of them UCS-2 for a curly quote; 4–6 % of the encoding call). The first 512 units' lines
//! are now requested at once, and each ASCII run asks for the line 512 units ahead: 6 alternated process pairs,
//! `encode_to_numpy` per document, cold +0.6–4.6 %, steady +0.8–4.3 % (every pair faster); multilingual text
//! (o200k) cold +0.5–3.6 %, steady the same.
//!
//! Outside ASCII runs, units go eight at a time through a loop without a branch between one, two and three
//! bytes: a character is stored as four bytes (`SLACK`), of which the next one overwrites what is not its own,
//! and a surrogate is told once at the end. The branch per unit between ASCII and the rest mispredicted at
//! nearly every word of a script that spaces its words. 1.6 M units of the benchmark's multilingual documents
//! (UCS-2), transcoded in windows of 2^18 units: 4.3 → 3.7 ms from memory, 23.5–25 → 20.5–21.7 ms for a
//! window 40 times from cache; 10 MB of English from memory the same (3.2–3.3 ms). ~4 KB multilingual documents
//! (r50k, `encode_to_numpy`, 5 alternated process pairs): cold +2 %, steady +2.5 %; English documents even
//! (6 pairs).
//!
//! Where the CPU has AVX-512 with VBMI2 (and the level `crate::cpu` uses allows AVX-512), UCS-2 goes through
//! vector code (`ucs2_avx512`): 32 ASCII units narrowed at once, else 16 units each made into its one to three
//! bytes in a 32-bit lane and the bytes kept compressed together. The same 1.6 M multilingual units: 0.7 ms
//! from memory (4.3 before the branch-free loop, 3.7 with it), 2.9 ms for the cached window 40 times (24);
//! 10 MB of English from memory 3.2 → 2.2 ms (reading it alone takes 2 ms). ~4 KB multilingual documents
//! (r50k, 6 pairs): cold +4 %, steady +5.5 %; English documents +1.4 % / +2.4 % (5 pairs); one call on 10 MB
//! of English 4 % less time. Each lane's length reached its bytes first by a 32-bit multiply: perf then
//! showed the transcoding's samples gone, but the documents were no faster (8 pairs, −1 to −2 %); with a byte
//! shuffle instead they are (above). Most likely the core lowers its clock for a 512-bit multiply (not measured:
//! the VM has no counters).

use std::mem::MaybeUninit;

use crate::error::Error;

/// Why a text has no UTF-8 here.
#[derive(Debug, PartialEq, Eq)]
pub enum NoUtf8 {
    /// A unit is a surrogate (or above U+10FFFF): no character.
    NotACharacter,
    /// The room for it could not be had (this many bytes).
    Memory(usize),
}

impl NoUtf8 {
    /// The error to report (a text that is no characters cannot reach here from a Python str: see the bindings).
    pub fn into_error(self) -> Error {
        match self {
            NoUtf8::NotACharacter => Error::value("the text holds a lone surrogate, which has no UTF-8".to_string()),
            NoUtf8::Memory(bytes) => Error::memory(bytes, "the text's UTF-8"),
        }
    }
}

/// Latin-1 (every character below U+0100) as UTF-8.
pub fn from_latin1(latin1: &[u8]) -> Result<String, NoUtf8> {
    let mut out = String::new();
    push_latin1(latin1, &mut out).map(|()| out)
}

/// UCS-2 (code points below U+10000, each one unit) as UTF-8.
pub fn from_ucs2(units: &[u16]) -> Result<String, NoUtf8> {
    let mut out = String::new();
    push_ucs2(units, &mut out).map(|()| out)
}

/// UCS-4 (one unit per code point) as UTF-8.
pub fn from_ucs4(units: &[u32]) -> Result<String, NoUtf8> {
    let mut out = String::new();
    push_ucs4(units, &mut out).map(|()| out)
}

/// `from_latin1`, appended to `out` (unchanged on an error); a reused `out` keeps its room.
pub fn push_latin1(latin1: &[u8], out: &mut String) -> Result<(), NoUtf8> {
    push_code_points::<u8, 2>(latin1, out, |_, _| (0, 0, false))
}

/// `from_ucs2`, appended to `out` (unchanged on an error).
pub fn push_ucs2(units: &[u16], out: &mut String) -> Result<(), NoUtf8> {
    push_ucs2_at(crate::cpu::level(), units, out)
}

/// `push_ucs2` with the vector code of `level` where this CPU has it (`vector_ucs2`), the rest unit by unit.
fn push_ucs2_at(level: crate::cpu::Level, units: &[u16], out: &mut String) -> Result<(), NoUtf8> {
    push_code_points::<u16, 3>(units, out, |units, room| vector_ucs2(level, units, room))
}

/// Whether `vector_ucs2` has code for `level` on this CPU: AVX-512 with VBMI2 (its byte compress).
fn has_vector_ucs2(level: crate::cpu::Level) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        level >= crate::cpu::Level::Avx512 && std::arch::is_x86_feature_detected!("avx512vbmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        false
    }
}

/// The UTF-8 of a prefix of `units` into `room`, 16 or 32 units at a time, if `level` and this CPU allow (see
/// `has_vector_ucs2`): (units read, bytes written, whether one was a surrogate); the caller goes on from there.
fn vector_ucs2(level: crate::cpu::Level, units: &[u16], room: &mut [MaybeUninit<u8>]) -> (usize, usize, bool) {
    #[cfg(target_arch = "x86_64")]
    if has_vector_ucs2(level) {
        // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX-512VBMI2 (checked just above).
        return unsafe { ucs2_avx512(units, room) };
    }
    let _ = (level, units, room);
    (0, 0, false)
}

/// `vector_ucs2` with AVX-512. A run of 32 ASCII units is narrowed at once; else 16 units are widened to 32 bits
/// each, every one's UTF-8 (one to three bytes) made in its lane as the scalar loop makes it, and the bytes
/// each lane keeps compressed together (`vpcompressb`) and stored as one 64-byte write, of which the next
/// write overwrites what is not kept. It stops where fewer than 32 units, or fewer than 64 bytes of room, are
/// left.
///
/// # Safety
/// The CPU must have AVX-512F, AVX-512BW and AVX-512VBMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
unsafe fn ucs2_avx512(units: &[u16], room: &mut [MaybeUninit<u8>]) -> (usize, usize, bool) {
    use std::arch::x86_64::*;
    let (mut i, mut at) = (0, 0);
    let mut surrogates: u16 = 0;
    let src = units.as_ptr();
    let dst = room.as_mut_ptr().cast::<u8>();
    let byte_in_lane = _mm512_set1_epi32(0x0302_0100);
    // Each lane's low byte into all four of its bytes (the shuffle's indices are within each 16-byte block).
    let len_to_bytes = _mm512_set4_epi32(0x0c0c_0c0c, 0x0808_0808, 0x0404_0404, 0);
    let ones = _mm512_set1_epi32(1);
    while i + 32 <= units.len() && at + 64 <= room.len() {
        if let Some(ahead) = units.get(i + PREFETCH_UNITS) {
            crate::prefetch(ahead);
        }
        // SAFETY: 32 units from `i` are in `units`; 64 bytes from `at` are in `room` (checked by the loop).
        unsafe {
            let v = _mm512_loadu_si512(src.add(i).cast());
            if _mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x80)) == 0 {
                _mm256_storeu_si256(dst.add(at).cast(), _mm512_cvtepi16_epi8(v));
                (i, at) = (i + 32, at + 32);
                continue;
            }
            let c = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)); // the first 16 of the 32 units
            let multi = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x80));
            let long = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x800));
            let masked = _mm512_and_si512(c, _mm512_set1_epi32(0xF800));
            surrogates |= _mm512_cmpeq_epi32_mask(masked, _mm512_set1_epi32(0xD800));
            let last = _mm512_slli_epi32::<8>(_mm512_or_si512(
                _mm512_and_si512(c, _mm512_set1_epi32(0x3F)),
                _mm512_set1_epi32(0x80),
            ));
            let two = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi32::<6>(c), _mm512_set1_epi32(0xC0)), last);
            let middle = _mm512_or_si512(
                _mm512_and_si512(_mm512_srli_epi32::<6>(c), _mm512_set1_epi32(0x3F)),
                _mm512_set1_epi32(0x80),
            );
            let three = _mm512_or_si512(
                _mm512_or_si512(_mm512_srli_epi32::<12>(c), _mm512_set1_epi32(0xE0)),
                _mm512_slli_epi32::<8>(_mm512_or_si512(middle, last)),
            );
            let word = _mm512_mask_blend_epi32(long, _mm512_mask_blend_epi32(multi, c, two), three);
            // Each lane's length (1 + multi + long) in each of its bytes; a byte is kept below its lane's length.
            let one_or_two = _mm512_mask_add_epi32(ones, multi, ones, ones);
            let len = _mm512_mask_add_epi32(one_or_two, long, one_or_two, ones);
            let keep = _mm512_cmplt_epu8_mask(byte_in_lane, _mm512_shuffle_epi8(len, len_to_bytes));
            _mm512_storeu_si512(dst.add(at).cast(), _mm512_maskz_compress_epi8(keep, word));
            (i, at) = (i + 16, at + keep.count_ones() as usize);
        }
    }
    (i, at, surrogates != 0)
}

/// `from_ucs4`, appended to `out` (unchanged on an error).
pub fn push_ucs4(units: &[u32], out: &mut String) -> Result<(), NoUtf8> {
    push_code_points::<u32, 4>(units, out, |_, _| (0, 0, false))
}

/// Room beyond the longest UTF-8 of the units: a character of one to three bytes is written with a four-byte
/// store (at most two bytes past the room of the units up to it: a Latin-1 unit's).
const SLACK: usize = 2;

/// How far ahead of the unit being read `push_code_points` asks for the text (UCS-2: 1 KB, 16 lines).
const PREFETCH_UNITS: usize = 512;

/// Code points, one per unit, as UTF-8 appended to `out` (not if one is a surrogate or above U+10FFFF: then `out`
/// is as it was). One pass, into room for the longest UTF-8 the units can have (`MAX_BYTES` each): a first pass
/// to size it exactly cost a third more instructions (callgrind), and the text is freed when its call returns.
///
/// `prefix` transcodes a prefix of the units into the room first, as far as it can (the vector code): (units
/// read, bytes written, whether one was a surrogate).
#[inline(always)]
fn push_code_points<T: Copy + Into<u32>, const MAX_BYTES: usize>(
    units: &[T],
    out: &mut String,
    prefix: impl FnOnce(&[T], &mut [MaybeUninit<u8>]) -> (usize, usize, bool),
) -> Result<(), NoUtf8> {
    // (`SLACK` more: a character of one to three bytes is written as four, see below.)
    let most = units.len().saturating_mul(MAX_BYTES).saturating_add(SLACK);
    // SAFETY: bytes are only appended past the string's length, and its length is moved over them only once
    // they are all written as UTF-8 (below).
    let out = unsafe { out.as_mut_vec() };
    out.try_reserve(most).map_err(|_| NoUtf8::Memory(out.len().saturating_add(most)))?;
    let before = out.len();
    let room = &mut out.spare_capacity_mut()[..most];
    // The text's first lines requested together rather than one miss after another (see the notes above).
    for unit in units.iter().take(PREFETCH_UNITS).step_by(64 / size_of::<T>()) {
        crate::prefetch(unit);
    }
    // Units read, bytes written; whether a unit was a surrogate (told at the end: no branch per unit).
    let (mut i, mut at, mut surrogate) = prefix(units, room);
    debug_assert!(i <= units.len() && at <= i * MAX_BYTES);
    while i < units.len() {
        // Eight units at a time while they are ASCII (one bounds check, one compare of their OR)...
        while let (Some(eight), Some(dst)) = (units.get(i..i + 8), room.get_mut(at..at + 8)) {
            if let Some(ahead) = units.get(i + PREFETCH_UNITS) {
                crate::prefetch(ahead);
            }
            if eight.iter().fold(0u32, |acc, &u| acc | u.into()) >= 0x80 {
                break;
            }
            for (d, &u) in dst.iter_mut().zip(eight) {
                d.write(u.into() as u8);
            }
            (i, at) = (i + 8, at + 8);
        }
        // ...else those eight (or the last few) one by one: one, two or three bytes chosen without a branch (a
        // script's letters mix with ASCII spaces and marks word by word), written as one four-byte store whose
        // last bytes the next character overwrites.
        let end = (i + 8).min(units.len());
        for &unit in &units[i..end] {
            let c: u32 = unit.into();
            if c >= 0x1_0000 {
                if c > 0x10_FFFF {
                    return Err(NoUtf8::NotACharacter);
                }
                let dst = &mut room[at..at + 4];
                dst[0].write(0xF0 | (c >> 18) as u8);
                dst[1].write(0x80 | ((c >> 12) & 0x3F) as u8);
                dst[2].write(0x80 | ((c >> 6) & 0x3F) as u8);
                dst[3].write(0x80 | (c & 0x3F) as u8);
                at += 4;
                continue;
            }
            surrogate |= (c & !0x7FF) == 0xD800;
            let two = (0xC0 | (c >> 6)) | (0x80 | (c & 0x3F)) << 8;
            let three = (0xE0 | (c >> 12)) | (0x80 | ((c >> 6) & 0x3F)) << 8 | (0x80 | (c & 0x3F)) << 16;
            let (multi, long) = (c >= 0x80, c >= 0x800);
            let word = if long {
                three
            } else if multi {
                two
            } else {
                c
            };
            for (d, b) in room[at..at + 4].iter_mut().zip(word.to_le_bytes()) {
                d.write(b);
            }
            at += 1 + usize::from(multi) + usize::from(long);
        }
        i = end;
    }
    if surrogate {
        return Err(NoUtf8::NotACharacter);
    }
    // SAFETY: the first `at` bytes past the old length were written, each unit as the UTF-8 of its code point
    // (surrogates and values above U+10FFFF refused), and `room` lies within the capacity.
    unsafe { out.set_len(before + at) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::Level;

    /// Appending keeps what the string held, and a unit with no character leaves it as it was.
    #[test]
    fn appending_keeps_the_string_and_an_error_leaves_it_alone() {
        let mut out = String::from("héllo ");
        push_ucs2(&"“wörld” ".chars().map(|c| c as u32 as u16).collect::<Vec<_>>(), &mut out).unwrap();
        push_latin1(&[b'c', b'a', b'f', 0xE9], &mut out).unwrap();
        push_ucs4(&[0x20, 0x1F642], &mut out).unwrap();
        assert_eq!(out, "héllo “wörld” café 🙂");
        assert_eq!(push_ucs2(&[0x61, 0xD800, 0x62], &mut out), Err(NoUtf8::NotACharacter));
        assert_eq!(push_ucs4(&[0x61, 0x11_0000], &mut out), Err(NoUtf8::NotACharacter));
        assert_eq!(out, "héllo “wörld” café 🙂");
    }

    /// Every code point below U+10000 but the surrogates, in UCS-2 and UCS-4, and every Latin-1 character,
    /// transcode to what Rust's own encoding gives; runs of ASCII of every length and alignment too.
    #[test]
    fn the_transcoders_agree_with_rust() {
        let bmp: Vec<char> = (0..0x10000u32).filter_map(char::from_u32).collect();
        let text: String = bmp.iter().collect();
        let ucs2: Vec<u16> = bmp.iter().map(|&c| c as u32 as u16).collect();
        assert_eq!(from_ucs2(&ucs2).as_deref(), Ok(text.as_str()));
        let ucs4: Vec<u32> = text.chars().chain(['\u{10000}', '\u{10FFFF}']).map(|c| c as u32).collect();
        let with_astral: String = text.chars().chain(['\u{10000}', '\u{10FFFF}']).collect();
        assert_eq!(from_ucs4(&ucs4).as_deref(), Ok(with_astral.as_str()));
        let latin1: Vec<u8> = (0..=255u8).collect();
        assert_eq!(from_latin1(&latin1), Ok((0..=255u8).map(char::from).collect::<String>()));
        for n in 0..12 {
            for offset in 0..4 {
                let mixed: String = "é".repeat(offset) + &"a".repeat(n) + "“" + &"b".repeat(n);
                let units: Vec<u16> = mixed.chars().map(|c| c as u32 as u16).collect();
                assert_eq!(from_ucs2(&units).as_deref(), Ok(mixed.as_str()));
                let bytes: Vec<u8> =
                    "é".repeat(offset).chars().chain("ab".repeat(n).chars()).map(|c| c as u8).collect();
                let expected: String = bytes.iter().map(|&b| char::from(b)).collect();
                assert_eq!(from_latin1(&bytes), Ok(expected));
            }
        }
    }

    /// Characters of one to four bytes in every order and run length, from every alignment, in each storage
    /// that holds them: the branch-free writes (four bytes stored, one to three kept) and the eight-unit ASCII
    /// runs between them give Rust's own UTF-8, appended to a string that holds text already.
    #[test]
    fn mixed_widths_transcode_exactly_at_every_length() {
        let alphabet = ['a', ' ', 'é', 'ÿ', 'ж', 'ߺ', 'ࠀ', '語', '\u{FFFF}', '🙂'];
        let mut x = 11u64;
        let mut next = move |k: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % k
        };
        for len in 0..200 {
            for widths in [2, 4, 9, 10] {
                // widths 2: ASCII only; 4: Latin-1; 9: the BMP; 10: with an astral character.
                let text: String = (0..len)
                    .map(|_| {
                        let c = alphabet[next(widths)];
                        if next(3) == 0 { alphabet[0] } else { c } // ASCII runs of some length too
                    })
                    .collect();
                let prefix = "é".repeat(len % 3);
                let mut out = prefix.clone();
                let expected = prefix + &text;
                if widths <= 4 {
                    let latin1: Vec<u8> = text.chars().map(|c| c as u32 as u8).collect();
                    push_latin1(&latin1, &mut out).unwrap();
                    assert_eq!(out, expected, "Latin-1, {len} characters");
                    out.truncate(out.len() - text.len());
                }
                if widths <= 9 {
                    let ucs2: Vec<u16> = text.chars().map(|c| c as u32 as u16).collect();
                    for level in Level::ALL {
                        push_ucs2_at(level, &ucs2, &mut out).unwrap();
                        assert_eq!(out, expected, "UCS-2, {len} characters, {level:?}");
                        out.truncate(out.len() - text.len());
                    }
                }
                let ucs4: Vec<u32> = text.chars().map(|c| c as u32).collect();
                push_ucs4(&ucs4, &mut out).unwrap();
                assert_eq!(out, expected, "UCS-4, {len} characters");
            }
        }
    }

    /// Where the CPU has the vector code, it reads all but the last few units of a long text itself, and writes
    /// what the scalar loop writes.
    #[test]
    fn the_vector_code_reads_long_texts_where_the_cpu_has_it() {
        let text: String = "Привет, 世界! ".repeat(50);
        let units: Vec<u16> = text.chars().map(|c| c as u32 as u16).collect();
        let mut room = vec![MaybeUninit::new(0u8); units.len() * 3 + SLACK];
        let (read, written, surrogate) = vector_ucs2(Level::Avx512, &units, &mut room);
        if has_vector_ucs2(Level::Avx512) {
            assert!(read + 32 > units.len() && !surrogate, "read {read} of {}", units.len());
            // SAFETY: the room was made initialised (zeros), and the vector code wrote its first `written` bytes.
            let made: Vec<u8> = room[..written].iter().map(|b| unsafe { b.assume_init() }).collect();
            let expected: String = text.chars().take(read).collect();
            assert_eq!(made, expected.as_bytes());
        } else {
            assert_eq!((read, written), (0, 0));
        }
        assert_eq!(vector_ucs2(Level::Portable, &units, &mut room), (0, 0, false));
    }

    /// A surrogate anywhere in a long text, at every level: an error, the string as it was.
    #[test]
    fn a_surrogate_anywhere_leaves_the_string_alone() {
        for at in [0, 1, 15, 16, 31, 32, 47, 63, 64, 100, 199] {
            for level in Level::ALL {
                let mut units: Vec<u16> = "жa語 ".chars().cycle().take(200).map(|c| c as u32 as u16).collect();
                units[at] = 0xDC00 + at as u16;
                let mut out = String::from("kept");
                assert_eq!(push_ucs2_at(level, &units, &mut out), Err(NoUtf8::NotACharacter), "at {at}, {level:?}");
                assert_eq!(out, "kept");
            }
        }
    }

    #[test]
    fn surrogates_have_no_utf8() {
        assert_eq!(from_ucs2(&[0x61, 0xD800, 0x62]), Err(NoUtf8::NotACharacter));
        assert_eq!(from_ucs2(&[0x61, 0x62, 0x63, 0x64, 0xDFFF]), Err(NoUtf8::NotACharacter));
        assert_eq!(from_ucs4(&[0x61, 0xDC00]), Err(NoUtf8::NotACharacter));
        assert_eq!(from_ucs4(&[0x110000]), Err(NoUtf8::NotACharacter));
    }
}
