//! The vector a long text's ids are written into: room for all of them reserved once, written on 2 MB pages
//! where the system has them, and handed over without moving, its unused room given back to the system.
//!
//! Performance notes (Intel Xeon VM, 2 cores; a first write to memory the process has not touched costs a page
//! fault per 4 KB, ~1.4 µs here):
//! - A third of a text's bytes used to be reserved for its ids. Random digits, base64 or multilingual text
//!   need more (0.4–0.7 ids per byte): the ids filled the room, moved into a larger vector (pages new to the
//!   process again), and moved once more when handed to numpy with much of that room unused. Ids are never more
//!   than bytes (a token spells at least one byte), so a text of `WHOLE_ROOM` bytes now gets room for one id
//!   per byte: pages of it that are never written are never faulted in and cost address space only.
//! - Before a numpy array takes the vector, its room beyond the ids is given back page by page (`fit`) rather
//!   than copied into a vector of the ids' size: no copy, and no fresh pages for it.
//! - While the ids are written, the room's whole 2 MB pages are advised as huge pages where the system gives
//!   them only on advice (`madvise` mode of transparent huge pages): one fault per 2 MB instead of 512. The
//!   advice is withdrawn once the ids are written, so that the allocator's memory, which the vector returns to
//!   later, is not left advised (mimalloc is built without huge pages: on all its memory they made a process
//!   15–21 MB larger; see Cargo.toml).
//!
//! Measured (alternated processes, each pinned to one CPU): the first call after loading on 1 MB of random
//! digits (r50k) 1 003 → 579 page faults, 32.5 → 31.7 ms (medians of 3); 1 MB of base64 (cl100k) 1 410 → 678
//! faults, 1–4 % less time; 1 MB of random letters (o200k) 1 055 → 478 faults, the same time. One call on
//! 10 MB of English (r50k) ~3 370 → ~1 250 faults, cold +2.5 % (medians of 4). A batch of 10 MB of ~4 KB
//! documents in one call, one thread: r50k cold 180 → 187 MB/s and steady 220 → 248 (the cold batch's freed
//! vector had been given back and its pages were faulted in again: 2 684 faults → 48), o200k cold +2 %.

use std::ops::RangeInclusive;

use crate::error::{Result, try_reserve};

/// Texts of this many bytes get room for one id per byte (`reserve`); shorter ones a third of their bytes (a
/// small vector shares its pages with other allocations, so its unused room is memory), and longer ones too
/// (room of 4 bytes per byte of a gigabyte text can exceed what the system lets a process reserve).
pub const WHOLE_ROOM: RangeInclusive<usize> = (256 << 10)..=(64 << 20);

/// Vectors of at least this many bytes give their unused room back page by page instead of moving (`fit`):
/// the allocator gives them pages of their own.
const RELEASE_FROM_BYTES: usize = 1 << 20;

/// The room reserved for a text's ids (`reserve`): holds its huge-page advice until dropped, once the ids are
/// written (or an error ended the writing); the huge pages already made stay.
#[must_use = "keep the room until its ids are written (`let _room = ...`)"]
pub struct Room {
    /// The advised span (start, length in bytes), if any.
    advised: Option<(usize, usize)>,
}

/// Reserves room in `ids` for the ids of a text of `bytes` bytes (of about that many, when it comes in
/// windows): for all of them in `WHOLE_ROOM` (a third if that much cannot be had), else for a third; an
/// error if not even that can be had.
///
/// ```
/// use bytepair::id_room;
/// let mut ids = Vec::new();
/// let room = id_room::reserve(&mut ids, 1 << 20).unwrap();
/// assert!(ids.capacity() > 1 << 20);
/// ids.extend([1, 2, 3]);
/// drop(room); // the ids are written
/// assert_eq!(ids, [1, 2, 3]);
/// ```
pub fn reserve(ids: &mut Vec<u32>, bytes: usize) -> Result<Room> {
    let whole = WHOLE_ROOM.contains(&bytes) && try_reserve(ids, bytes + 1, IDS).is_ok();
    if !whole {
        try_reserve(ids, bytes / 3 + 1, IDS)?;
    }
    Ok(Room { advised: advise_huge_pages(ids) })
}

/// What `try_reserve` names when token ids cannot be had (here, in the tokenizer and the batch outputs).
pub(crate) const IDS: &str = "the token ids";

impl Drop for Room {
    /// Withdraws the huge-page advice.
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some((start, len)) = self.advised {
            // SAFETY: advice on a span this vector was given; the memory stays mapped and its contents unchanged
            // whatever became of the vector since (moved: the allocator's memory, advised as it was).
            unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_NOHUGEPAGE) };
        }
    }
}

/// `ids` without much unused room, for handing over (a numpy array keeps the vector's whole allocation alive):
/// a large vector gives back the whole pages of its unused room and stays where it is; a small one moves into
/// a fitting allocation when more than an eighth is unused.
///
/// ```
/// let mut ids: Vec<u32> = Vec::with_capacity(1000);
/// ids.push(7);
/// bytepair::id_room::fit(&mut ids);
/// assert!(ids.capacity() < 100 && ids == [7]);
/// ```
pub fn fit(ids: &mut Vec<u32>) {
    let unused = ids.capacity() - ids.len();
    if unused <= ids.len() / 8 + 64 {
        return;
    }
    #[cfg(target_os = "linux")]
    if ids.capacity() * size_of::<u32>() >= RELEASE_FROM_BYTES {
        if let Some((start, len)) = unused_pages(ids, crate::encode::huge_pages::page_size()) {
            // SAFETY: whole pages of the vector's own allocation past its items, which nothing reads: given
            // back, they read as zeros if ever written again (anonymous private memory).
            unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        }
        return;
    }
    ids.shrink_to_fit();
}

/// The whole pages of `page` bytes in `ids`' unused room (start address, length in bytes), if any.
#[cfg(target_os = "linux")]
fn unused_pages(ids: &Vec<u32>, page: usize) -> Option<(usize, usize)> {
    let start = (ids.as_ptr() as usize + ids.len() * size_of::<u32>()).next_multiple_of(page);
    let end = (ids.as_ptr() as usize + ids.capacity() * size_of::<u32>()) / page * page;
    (end > start).then(|| (start, end - start))
}

/// Advises huge pages for the whole 2 MB pages of `ids`' unused room, where the system gives them on advice
/// only; the span advised, if any.
fn advise_huge_pages(ids: &Vec<u32>) -> Option<(usize, usize)> {
    #[cfg(target_os = "linux")]
    {
        use crate::encode::huge_pages::{HUGE_PAGE, huge_pages_on_advice};
        if let Some((start, len)) = unused_pages(ids, HUGE_PAGE)
            && huge_pages_on_advice()
            // SAFETY: advice on whole pages of the vector's own allocation; contents and mapping unchanged.
            && unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE) } == 0
        {
            return Some((start, len));
        }
    }
    let _ = ids;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping that holds `address` (Linux's /proc/self/smaps).
    #[cfg(target_os = "linux")]
    fn vm_flags(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((from, to)) = range.split_once('-')
                && let (Ok(from), Ok(to)) = (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16))
            {
                inside = (from..to).contains(&address);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_string());
            }
        }
        None
    }

    #[test]
    fn long_texts_get_room_for_an_id_per_byte_and_short_ones_a_third() {
        for bytes in [0, 1000, (256 << 10) - 1, 256 << 10, 3 << 20, 64 << 20, (64 << 20) + 1] {
            let mut ids = Vec::new();
            let room = reserve(&mut ids, bytes).unwrap();
            let wanted = if WHOLE_ROOM.contains(&bytes) { bytes + 1 } else { bytes / 3 + 1 };
            assert!(ids.capacity() >= wanted && ids.capacity() < wanted + 4096, "{bytes}: {}", ids.capacity());
            ids.extend((0..bytes.min(1 << 20) as u32 / 3).map(|i| i.wrapping_mul(2_654_435_761)));
            let before = ids.clone();
            drop(room);
            assert_eq!(ids, before);
        }
    }

    #[test]
    fn a_large_vector_fits_in_place_and_its_room_can_be_written_again() {
        let mut ids: Vec<u32> = Vec::with_capacity(4 << 20);
        ids.extend(0..1_000_000u32);
        // Its room once written (as memory the allocator hands out again may have been), then given back.
        ids.extend(std::iter::repeat_n(9, 2 << 20));
        ids.truncate(1_000_000);
        let (at, capacity) = (ids.as_ptr(), ids.capacity());
        fit(&mut ids);
        assert_eq!((ids.as_ptr(), ids.capacity()), (at, capacity));
        assert!(ids.iter().enumerate().all(|(i, &id)| id == i as u32));
        ids.extend(1_000_000..3_000_000u32);
        assert!(ids.iter().enumerate().all(|(i, &id)| id == i as u32));
        let mut small: Vec<u32> = Vec::with_capacity(10_000);
        small.extend(0..100);
        fit(&mut small);
        assert!(small.capacity() < 1000 && small == (0..100).collect::<Vec<_>>());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn huge_page_advice_lasts_while_the_room_is_held() {
        if !crate::encode::huge_pages::huge_pages_on_advice() {
            return; // nothing is advised where advice changes nothing
        }
        let mut ids = Vec::new();
        let room = reserve(&mut ids, 16 << 20).unwrap();
        let (start, _) = room.advised.expect("a 64 MB room holds whole 2 MB pages");
        assert!(vm_flags(start).expect("mapped").split(' ').any(|f| f == "hg"));
        ids.push(1);
        drop(room);
        let flags = vm_flags(start).expect("mapped");
        assert!(flags.split(' ').any(|f| f == "nh") && !flags.split(' ').any(|f| f == "hg"), "{flags}");
    }
}
