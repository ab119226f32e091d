//! A pair's occurrence list: the positions of its left symbol, ascending except after a merge that recreates
//! an existing token (the list is then sorted when next read).
//!
//! Two forms, one interface: a plain `Vec<u32>` (text: lists are short, speed first), and `DeltaList` for
//! the compact layout (genomes: at first every position of the genome is in some list). A `DeltaList`
//! stores the difference to the previous entry as a zigzag LEB128 varint: one byte while entries are less
//! than 64 apart (DNA's 16 initial pairs are ~16 apart on average), five at worst — ~1.2 bytes per entry
//! instead of 4 where it matters. Lists are only ever read in order, so nothing else is needed.

/// How far ahead a scan of a list looks (to prefetch what it is about to check).
pub(super) const LOOKAHEAD: usize = 16;

/// The operations the merge loop needs.
pub(super) trait OccurrenceList: Default + Send + Sync {
    /// A place in the list, for resuming a scan (the `first_seen` tie key).
    type Cursor: Copy + Default + Send + Sync;
    /// An empty list with room for `cost` storage units (see `cost`).
    fn with_capacity(cost: usize) -> Self;
    /// Storage units entry `pos` takes after an entry `prev`.
    fn cost(prev: u32, pos: u32) -> usize;
    fn last_entry(&self) -> Option<u32>;
    fn add(&mut self, pos: u32);
    /// Appends `tail`, a list of later positions built on its own (starting from 0).
    fn append(&mut self, tail: Self);
    /// All entries in order (decoded into `scratch` if need be).
    fn positions<'a>(&'a self, scratch: &'a mut Vec<u32>) -> &'a [u32];
    /// The entry at `cursor` and the cursor after it, or None at the end.
    fn next(&self, cursor: Self::Cursor) -> Option<(u32, Self::Cursor)>;
    fn sort_dedup(&mut self);
    /// Heap bytes held.
    fn heap_bytes(&self) -> usize;
}

impl OccurrenceList for Vec<u32> {
    type Cursor = u32;

    fn with_capacity(cost: usize) -> Self {
        Vec::with_capacity(cost)
    }

    #[inline]
    fn cost(_prev: u32, _pos: u32) -> usize {
        1
    }

    #[inline]
    fn last_entry(&self) -> Option<u32> {
        self.last().copied()
    }

    #[inline]
    fn add(&mut self, pos: u32) {
        self.push(pos);
    }

    fn append(&mut self, tail: Self) {
        self.extend_from_slice(&tail);
    }

    #[inline]
    fn positions<'a>(&'a self, _scratch: &'a mut Vec<u32>) -> &'a [u32] {
        self
    }

    #[inline]
    fn next(&self, cursor: u32) -> Option<(u32, u32)> {
        self.get(cursor as usize).map(|&p| (p, cursor + 1))
    }

    fn sort_dedup(&mut self) {
        self.sort_unstable();
        self.dedup();
    }

    fn heap_bytes(&self) -> usize {
        self.capacity() * 4
    }
}

/// Positions as zigzag LEB128 differences (see the module notes).
#[derive(Default)]
pub(super) struct DeltaList {
    bytes: Vec<u8>,
    len: u32,
    /// The last entry (0 when empty: the first difference is from 0).
    last: u32,
}

/// A cursor into a `DeltaList`: the byte offset of the next entry and the entry before it.
#[derive(Clone, Copy, Default)]
pub(super) struct DeltaCursor {
    offset: u32,
    previous: u32,
}

#[inline]
fn zigzag(prev: u32, pos: u32) -> u64 {
    let d = pos as i64 - prev as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn varint_len(z: u64) -> usize {
    match z {
        0..0x80 => 1,
        0x80..0x4000 => 2,
        0x4000..0x20_0000 => 3,
        0x20_0000..0x1000_0000 => 4,
        _ => 5,
    }
}

impl DeltaList {
    /// Decodes the entry at byte `offset` (after `previous`): (entry, next offset).
    #[inline]
    fn decode(&self, offset: usize, previous: u32) -> (u32, usize) {
        let mut z: u64 = 0;
        let mut shift = 0;
        let mut i = offset;
        loop {
            let b = self.bytes[i];
            z |= ((b & 0x7F) as u64) << shift;
            i += 1;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        ((previous as i64 + d) as u32, i)
    }

    fn decode_all(&self, out: &mut Vec<u32>) {
        out.clear();
        out.reserve(self.len as usize);
        let (mut offset, mut previous) = (0usize, 0u32);
        while offset < self.bytes.len() {
            let (p, next) = self.decode(offset, previous);
            out.push(p);
            offset = next;
            previous = p;
        }
    }

    fn encode_all(positions: &[u32]) -> DeltaList {
        let mut prev = 0;
        let cost: usize = positions
            .iter()
            .map(|&p| {
                let c = Self::cost(prev, p);
                prev = p;
                c
            })
            .sum();
        let mut list = DeltaList { bytes: Vec::with_capacity(cost), len: 0, last: 0 };
        for &p in positions {
            list.add(p);
        }
        list
    }
}

impl OccurrenceList for DeltaList {
    type Cursor = DeltaCursor;

    fn with_capacity(cost: usize) -> Self {
        DeltaList { bytes: Vec::with_capacity(cost), len: 0, last: 0 }
    }

    #[inline]
    fn cost(prev: u32, pos: u32) -> usize {
        varint_len(zigzag(prev, pos))
    }

    #[inline]
    fn last_entry(&self) -> Option<u32> {
        (self.len > 0).then_some(self.last)
    }

    #[inline]
    fn add(&mut self, pos: u32) {
        let mut z = zigzag(self.last, pos);
        while z >= 0x80 {
            self.bytes.push((z as u8) | 0x80);
            z >>= 7;
        }
        self.bytes.push(z as u8);
        self.last = pos;
        self.len += 1;
    }

    fn append(&mut self, tail: Self) {
        if tail.len == 0 {
            return;
        }
        // The tail's first entry is a difference from 0: write it again from this list's last entry.
        let (first, rest) = tail.decode(0, 0);
        self.add(first);
        self.bytes.extend_from_slice(&tail.bytes[rest..]);
        self.len += tail.len - 1;
        self.last = tail.last;
    }

    fn positions<'a>(&'a self, scratch: &'a mut Vec<u32>) -> &'a [u32] {
        self.decode_all(scratch);
        scratch
    }

    #[inline]
    fn next(&self, cursor: DeltaCursor) -> Option<(u32, DeltaCursor)> {
        if cursor.offset as usize >= self.bytes.len() {
            return None;
        }
        let (p, offset) = self.decode(cursor.offset as usize, cursor.previous);
        Some((p, DeltaCursor { offset: offset as u32, previous: p }))
    }

    fn sort_dedup(&mut self) {
        let mut all = Vec::new();
        self.decode_all(&mut all);
        all.sort_unstable();
        all.dedup();
        *self = DeltaList::encode_all(&all);
    }

    fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_lists_round_trip_any_order_and_resume_scans() {
        let positions = [0u32, 1, 2, 63, 64, 200, 100, 100_000, 5, u32::MAX - 1, 7, u32::MAX - 1];
        let mut list = DeltaList::default();
        let mut cost = 0;
        let mut prev = 0;
        for &p in &positions {
            cost += DeltaList::cost(prev, p);
            prev = p;
            list.add(p);
        }
        assert_eq!(list.bytes.len(), cost);
        let mut scratch = Vec::new();
        assert_eq!(list.positions(&mut scratch), positions);
        assert_eq!(list.last_entry(), Some(u32::MAX - 1));
        let mut cursor = DeltaCursor::default();
        let mut scanned = Vec::new();
        while let Some((p, next)) = list.next(cursor) {
            scanned.push(p);
            cursor = next;
        }
        assert_eq!(scanned, positions);
        list.sort_dedup();
        assert_eq!(list.positions(&mut scratch), [0, 1, 2, 5, 7, 63, 64, 100, 200, 100_000, u32::MAX - 1]);
        assert_eq!(list.len, 11);
        // A list built in two halves is the list built at once.
        let all: Vec<u32> = (0..500).map(|i| i * 37 % 1000 + i * 1000).collect();
        let mut head = DeltaList::encode_all(&all[..200]);
        head.append(DeltaList::encode_all(&all[200..]));
        let whole = DeltaList::encode_all(&all);
        assert_eq!((head.bytes.clone(), head.len, head.last), (whole.bytes.clone(), whole.len, whole.last));
        // Dense ascending positions take one byte each.
        let dense = DeltaList::encode_all(&(0..1000).map(|i| i * 16).collect::<Vec<u32>>());
        assert_eq!(dense.heap_bytes(), 1000);
    }
}
