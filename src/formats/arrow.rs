//! Arrow string arrays (`string` and `large_string`): an array of texts as two buffers — the texts' bytes one
//! after the other, and `length + 1` little-endian offsets (4 or 8 bytes each) of where each starts — read in
//! place, so that a HF `datasets` column reaches the word counter without a Python string per row.
//!
//! The buffers come from Python and are untrusted: offsets that run backwards or past the values, a buffer too
//! short for the rows asked for, or bytes that are not UTF-8 are errors naming the row, never a panic or a read
//! out of bounds. (Nulls are refused in Python, where the validity bitmap is easy to read.)

use crate::error::{Error, Result};

/// The texts of rows `first..first + length` of a string array whose offsets are `width` (4 or 8) bytes wide,
/// borrowed from `values`.
pub fn strings<'a>(
    values: &'a [u8],
    offsets: &[u8],
    width: usize,
    first: usize,
    length: usize,
) -> Result<Vec<&'a str>> {
    if width != 4 && width != 8 {
        return Err(Error::value(format!("Arrow offsets are 4 or 8 bytes wide, not {width}")));
    }
    let needed = first.checked_add(length).and_then(|n| n.checked_add(1)).and_then(|n| n.checked_mul(width));
    if needed.is_none_or(|n| n > offsets.len()) {
        return Err(Error::value(format!(
            "the Arrow offsets buffer has {} bytes, too few for rows {first}..{} of {width}-byte offsets",
            offsets.len(),
            first.saturating_add(length)
        )));
    }
    let offset_at = |row: usize| -> u64 {
        let at = row * width;
        if width == 4 {
            u32::from_le_bytes(offsets[at..at + 4].try_into().expect("4 bytes")) as u64
        } else {
            u64::from_le_bytes(offsets[at..at + 8].try_into().expect("8 bytes"))
        }
    };
    let mut texts = Vec::with_capacity(length);
    let mut start = offset_at(first);
    for row in 0..length {
        let end = offset_at(first + row + 1);
        if end < start || end > values.len() as u64 {
            return Err(Error::value(format!(
                "row {row} of the Arrow string array has offsets {start}..{end}, outside its {} bytes of text",
                values.len()
            )));
        }
        let bytes = &values[start as usize..end as usize];
        match std::str::from_utf8(bytes) {
            Ok(text) => texts.push(text),
            Err(e) => {
                return Err(Error::value(format!(
                    "row {row} of the Arrow string array is not UTF-8 (invalid byte sequence at byte {} of the row)",
                    e.valid_up_to()
                )));
            }
        }
        start = end;
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets32(ends: &[u32]) -> Vec<u8> {
        ends.iter().flat_map(|e| e.to_le_bytes()).collect()
    }

    #[test]
    fn rows_are_read_in_place_for_both_widths() {
        let values = b"helloworld!";
        assert_eq!(strings(values, &offsets32(&[0, 5, 10, 11]), 4, 0, 3).unwrap(), ["hello", "world", "!"]);
        assert_eq!(strings(values, &offsets32(&[0, 5, 10, 11]), 4, 1, 2).unwrap(), ["world", "!"]);
        let wide: Vec<u8> = [0u64, 5, 5, 11].iter().flat_map(|e| e.to_le_bytes()).collect();
        assert_eq!(strings(values, &wide, 8, 0, 3).unwrap(), ["hello", "", "world!"]);
        assert!(strings(values, &offsets32(&[3]), 4, 0, 0).unwrap().is_empty());
    }

    #[test]
    fn damaged_buffers_are_errors_naming_the_row() {
        let values = b"hello";
        let backwards = strings(values, &offsets32(&[0, 4, 2]), 4, 0, 2).unwrap_err();
        assert!(backwards.message.contains("row 1"), "{}", backwards.message);
        let past = strings(values, &offsets32(&[0, 9]), 4, 0, 1).unwrap_err();
        assert!(past.message.contains("outside its 5 bytes"), "{}", past.message);
        let short = strings(values, &offsets32(&[0, 5]), 4, 0, 2).unwrap_err();
        assert!(short.message.contains("too few"), "{}", short.message);
        let huge = strings(values, &offsets32(&[0]), 4, usize::MAX - 1, 5).unwrap_err();
        assert!(huge.message.contains("too few"), "{}", huge.message);
        let not_utf8 = strings(b"ab\xffc", &offsets32(&[0, 2, 4]), 4, 0, 2).unwrap_err();
        assert!(not_utf8.message.contains("row 1") && not_utf8.message.contains("not UTF-8"), "{}", not_utf8.message);
        assert!(strings(values, &offsets32(&[0, 5]), 3, 0, 1).is_err());
    }
}
