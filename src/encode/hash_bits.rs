//! A filter of hash values, one bit per value: set for the keys a table holds, so that a lookup whose bit is
//! clear is answered "absent" from a few KB instead of a slot of a table of MBs. The whole-token tables
//! (`whole.rs`) and the backtracker's pair table (`backtrack.rs`) keep one each; each picks its own bits of a
//! key's hash (the bits its table's slot does not already depend on, or the same product further on).

/// A power of two of bits, at least 64, indexed by any `usize` (its low bits).
#[derive(Clone, Debug)]
pub(super) struct HashBits {
    words: Box<[u64]>,
    /// The bit count less one.
    mask: usize,
}

impl HashBits {
    /// `bits` clear bits (a power of two, at least 64).
    ///
    /// ```text
    /// HashBits::new(1 << 20) → 128 KB
    /// ```
    pub(super) fn new(bits: usize) -> HashBits {
        assert!(bits.is_power_of_two() && bits >= 64, "a filter of {bits} bits");
        HashBits { words: vec![0; bits / 64].into_boxed_slice(), mask: bits - 1 }
    }

    /// Sets the bit of `value` (its low bits).
    pub(super) fn set(&mut self, value: usize) {
        let bit = value & self.mask;
        self.words[bit / 64] |= 1 << (bit % 64);
    }

    /// Whether the bit of `value` (its low bits) is set.
    #[inline(always)]
    pub(super) fn has(&self, value: usize) -> bool {
        let bit = value & self.mask;
        // SAFETY: `bit` is masked below the bit count, 64 to a word.
        let word = unsafe { *self.words.get_unchecked(bit / 64) };
        word >> (bit % 64) & 1 != 0
    }

    /// Bytes it takes.
    #[cfg(test)]
    pub(super) fn size_in_bytes(&self) -> usize {
        self.words.len() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_set_are_had_and_values_are_taken_by_their_low_bits() {
        let mut bits = HashBits::new(128);
        bits.set(3);
        bits.set(127 + 128 * 5);
        assert!(bits.has(3) && bits.has(127) && bits.has(3 + 128 * 9));
        assert!(!bits.has(4) && !bits.has(64) && !bits.has(126));
        assert_eq!(bits.size_in_bytes(), 16);
    }
}
