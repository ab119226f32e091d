//! Arrays on 2 MB pages for the tables that pieces probe at random: the shared whole-token table (`whole.rs`)
//! and the backtracker's pair table (`backtrack.rs`), and each thread's seen table once it is 2 MB (`caches.rs`).
//! (`crate::id_room` asks for them, with `HUGE_PAGE` and `huge_pages_on_advice`, for a long text's ids.)
//!
//! Performance notes:
//! - Nearly every piece probes the whole-token table at a random slot: 6 MB for o200k_base (4 MB of short
//!   tokens, 2 MB of 9 to 16 bytes), 3 MB for cl100k_base. On 4 KB pages each probe may also miss the TLB, and
//!   in a virtual machine a TLB miss walks two sets of page tables. The same table on 2 MB pages (one in-process
//!   A/B, the copy chosen by a switch per 0.25 MB of documents so that both see the same machine; ~4 KB English
//!   documents, 8 processes, the halves swapped between them): o200k cold +6.4 %, steady +4.0 %. r50k's tables
//!   (1 and 0.5 MB) gained 1 % when rounded up to a huge page each, and cl100k's 2 MB array lost 2–3.5 %, so
//!   the caller asks for huge pages only where they paid (`Pages`; `whole.rs`'s `HUGE_PAGES_FROM`).
//! - mimalloc is built without transparent huge pages (`no_thp` in Cargo.toml): it advised them on whole
//!   arenas, and a 2 MB page became resident for its first byte touched (15–21 MB more at a process's peak).
//!   Here only arrays of 2 MB or more are mapped so, each on its own: the kernel backs each whole 2 MB of one
//!   with a huge page and the rest with small pages, and every page of these tables is written while it is
//!   built, so no memory is resident that would not have been.
//! - Where there are no such pages (other systems, THP disabled, `mmap` refused) the array is an ordinary
//!   allocation, and nothing else changes.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU32;

/// The size of a transparent huge page on x86-64 and on aarch64 with 4 KB pages.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Which pages an array is asked to be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pages {
    /// Transparent huge pages where the array fills at least one (Linux), else ordinary memory.
    Huge,
    /// Ordinary memory.
    Small,
}

/// A fixed-length array of `T`, on transparent huge pages when asked and it fills at least one (Linux), else an
/// ordinary boxed slice.
///
/// Its pointer and length are the same fields whatever the memory, so that reading it is two loads and no
/// branch: as an enum of a `Box<[T]>` and a mapping, every probe of the whole-token table in the block loop
/// first read the variant, picked the pointer's address by it and loaded the pointer (perf annotate).
/// Alternated processes, ~4 KB English documents, o200k, 10 pairs, the machine bimodal throughout: in its fast
/// mode (5 and 6 processes) medians 146 → 153.5 MB/s cold, 172 → 182 steady; in its slow one 106 → 109 cold,
/// 130 → 127.5 steady.
pub(super) struct HugeSlice<T: Copy> {
    /// `len` initialised `T`s: from `mmap` when `mapped`, else a leaked `Box<[T]>` (dangling when empty).
    ptr: std::ptr::NonNull<T>,
    len: usize,
    mapped: bool,
}

// SAFETY: the array is owned by its `HugeSlice` alone (like a `Box<[T]>`): sharing or sending it is as
// safe as sharing or sending the `T`s.
unsafe impl<T: Copy + Send> Send for HugeSlice<T> {}
// SAFETY: as above; `&HugeSlice` gives only `&[T]`.
unsafe impl<T: Copy + Sync> Sync for HugeSlice<T> {}

impl<T: Copy> HugeSlice<T> {
    /// `len` copies of `value`, on `pages`.
    ///
    /// ```text
    /// HugeSlice::filled(1 << 18, slot, Pages::Huge) → 4 MB of 16-byte slots on two 2 MB pages (where the
    /// system has them)
    /// ```
    pub(super) fn filled(len: usize, value: T, pages: Pages) -> HugeSlice<T> {
        #[cfg(target_os = "linux")]
        if pages == Pages::Huge
            && let Some(ptr) = map_huge::<T>(len)
        {
            // SAFETY: `map_huge` mapped `len` writable, aligned `T`s, which nothing else refers to.
            unsafe {
                for i in 0..len {
                    ptr.as_ptr().add(i).write(value);
                }
            }
            return HugeSlice { ptr, len, mapped: true };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = pages; // (no huge pages to ask for)
        HugeSlice::boxed(vec![value; len].into_boxed_slice())
    }

    /// The array of `slice`, taken over (given back to the allocator on drop).
    fn boxed(slice: Box<[T]>) -> HugeSlice<T> {
        let len = slice.len();
        let ptr = std::ptr::NonNull::new(Box::into_raw(slice).cast::<T>()).expect("a box's pointer is not null");
        HugeSlice { ptr, len, mapped: false }
    }

    /// The array's first element, to write to through a shared `HugeSlice`: for tables several threads fill
    /// (`caches::SeenTable`), whose users never read an element while another thread may be writing it, and
    /// never through `Deref`.
    #[inline(always)]
    pub(super) fn shared_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// The pages the array was mapped on: `Huge` if it was mapped on its own, else `Small`.
    fn pages(&self) -> Pages {
        if self.mapped { Pages::Huge } else { Pages::Small }
    }
}

/// A fresh anonymous mapping for `len` `T`s, starting on a huge-page boundary and advised to be on huge pages,
/// when they take at least one huge page (the kernel then backs each whole 2 MB of it with one, and the rest
/// with small pages); None for smaller arrays, or if the system refuses.
#[cfg(target_os = "linux")]
fn map_huge<T>(len: usize) -> Option<std::ptr::NonNull<T>> {
    let bytes = mapped_bytes::<T>(len)?;
    // One huge page more than needed, so that an aligned start lies within; the rest is unmapped again.
    let span = bytes.checked_add(HUGE_PAGE)?;
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no existing memory;
    // the parts unmapped below lie inside it, and `aligned..aligned + bytes` stays mapped and is returned.
    unsafe {
        let base = libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if base == libc::MAP_FAILED {
            return None;
        }
        let start = base as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        if aligned > start {
            libc::munmap(base, aligned - start);
        }
        let tail = aligned + bytes;
        if start + span > tail {
            libc::munmap(tail as *mut libc::c_void, start + span - tail);
        }
        // Advice only: without it (or if refused) the memory is ordinary pages.
        libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        std::ptr::NonNull::new(aligned as *mut T)
    }
}

/// The bytes mapped for `len` `T`s (whole pages of the system's size), if they take at least a huge page.
#[cfg(target_os = "linux")]
fn mapped_bytes<T>(len: usize) -> Option<usize> {
    let bytes = len.checked_mul(size_of::<T>())?;
    let page = page_size();
    (bytes >= HUGE_PAGE && page <= HUGE_PAGE).then(|| bytes.next_multiple_of(page))
}

/// The system's page size in bytes (4 KB if it cannot be read).
#[cfg(target_os = "linux")]
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// Whether the system gives transparent huge pages to memory advised for them and to no other (its `madvise`
/// mode; read once): then advice changes something, and withdrawing it (`MADV_NOHUGEPAGE`) restores the
/// default. In `always` mode aligned memory gets them unasked, in `never` mode none does.
#[cfg(target_os = "linux")]
pub(crate) fn huge_pages_on_advice() -> bool {
    static ON_ADVICE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON_ADVICE.get_or_init(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|mode| mode.contains("[madvise]"))
    })
}

impl<T: Copy> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if self.mapped {
            let bytes = mapped_bytes::<T>(self.len).expect("a mapped array's size");
            // SAFETY: the mapping `map_huge` made, of exactly these bytes, unmapped once; `T` needs no drop.
            unsafe {
                libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, bytes);
            }
            return;
        }
        // SAFETY: not mapped, so `ptr` and `len` are the box `boxed` took over, given back once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) });
    }
}

impl<T: Copy> Deref for HugeSlice<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised `T`s, alive while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for HugeSlice<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for HugeSlice<T> {
    /// A copy on the same kind of pages.
    fn clone(&self) -> HugeSlice<T> {
        match self.first() {
            None => HugeSlice::default(),
            Some(&first) => {
                let mut copy = HugeSlice::filled(self.len(), first, self.pages());
                copy.copy_from_slice(self);
                copy
            }
        }
    }
}

impl<T: Copy> Default for HugeSlice<T> {
    fn default() -> HugeSlice<T> {
        HugeSlice::boxed(Box::new([]))
    }
}

impl<T: Copy> fmt::Debug for HugeSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HugeSlice of {} × {} bytes", self.len(), size_of::<T>())
    }
}

/// `len` zeroed `u32`s, shared as atomics, from a mapping of their own (Linux, from a page's worth up; else the
/// allocator's zeroed memory): the system gives a page only once it is written. The allocator clears the
/// memory it reuses for a zeroed allocation, so a large array of which only the start is ever written (the seen
/// table's overflow) was all resident: +2 to +15 MB at the peak of one-thread benchmark processes.
pub(super) struct ZeroedU32s {
    ptr: std::ptr::NonNull<u32>,
    len: usize,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    mapped: bool,
}

// SAFETY: the array is owned by its `ZeroedU32s` alone and reached only as atomics.
unsafe impl Send for ZeroedU32s {}
// SAFETY: as above.
unsafe impl Sync for ZeroedU32s {}

impl ZeroedU32s {
    /// `len` zeros.
    pub(super) fn new(len: usize) -> ZeroedU32s {
        #[cfg(target_os = "linux")]
        if let Some(ptr) = map_zeroed(len) {
            return ZeroedU32s { ptr, len, mapped: true };
        }
        let zeros = Box::into_raw(vec![0u32; len].into_boxed_slice());
        let ptr = std::ptr::NonNull::new(zeros.cast::<u32>()).expect("a box's pointer is not null");
        ZeroedU32s { ptr, len, mapped: false }
    }

    /// The array, as atomics.
    #[inline(always)]
    pub(super) fn atomics(&self) -> &[AtomicU32] {
        const { assert!(align_of::<AtomicU32>() == align_of::<u32>()) };
        // SAFETY: `len` initialised `u32`s, alive while `self` lives; `AtomicU32` has `u32`'s size and bit
        // validity and (asserted) its alignment, and the array is reached in no other way.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU32>(), self.len) }
    }
}

/// A fresh anonymous mapping of `len` zeroed `u32`s when they take at least a page (None for fewer, or if the
/// system refuses).
#[cfg(target_os = "linux")]
fn map_zeroed(len: usize) -> Option<std::ptr::NonNull<u32>> {
    let bytes = len.checked_mul(size_of::<u32>())?;
    if bytes < page_size() {
        return None;
    }
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no existing memory.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED { None } else { std::ptr::NonNull::new(base.cast::<u32>()) }
}

impl Drop for ZeroedU32s {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if self.mapped {
            // SAFETY: the mapping `map_zeroed` made, of exactly these bytes, unmapped once.
            unsafe {
                libc::munmap(self.ptr.as_ptr().cast::<libc::c_void>(), self.len * size_of::<u32>());
            }
            return;
        }
        // SAFETY: not mapped, so `ptr` and `len` are the box `new` made, given back once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_is_written_mapped_or_not() {
        // 2 MB or more of u64s, whole huge pages or not (mapped on Linux when asked), and less (allocated).
        for len in [HUGE_PAGE / 8, 2 * HUGE_PAGE / 8, HUGE_PAGE / 8 + 1001, HUGE_PAGE / 8 - 1, 1000, 1, 0] {
            for pages in [Pages::Huge, Pages::Small] {
                let mut slice = HugeSlice::filled(len, 7u64, pages);
                assert_eq!(slice.len(), len);
                assert!(slice.iter().all(|&x| x == 7));
                for (i, x) in slice.iter_mut().enumerate().step_by(511) {
                    *x = i as u64;
                }
                let copy = slice.clone();
                assert_eq!(&copy[..], &slice[..]);
                drop(slice);
                assert!(copy.iter().enumerate().all(|(i, &x)| x == if i % 511 == 0 { i as u64 } else { 7 }));
                let mapped = cfg!(target_os = "linux") && pages == Pages::Huge && len * 8 >= HUGE_PAGE;
                assert_eq!(copy.pages() == Pages::Huge, mapped, "{len} {pages:?}");
            }
        }
    }

    #[test]
    fn a_mapped_array_starts_on_a_huge_page_boundary() {
        let slice = HugeSlice::filled(HUGE_PAGE / 16, [0u64; 2], Pages::Huge);
        if slice.pages() == Pages::Huge {
            assert_eq!(slice.as_ptr() as usize % HUGE_PAGE, 0);
        }
    }

    #[test]
    fn zeroed_u32s_start_at_zero_and_keep_what_is_stored() {
        use std::sync::atomic::Ordering::Relaxed;
        // Fewer than a page (the allocator's), and several pages (a mapping of their own on Linux).
        for len in [0, 7, 1 << 20] {
            let array = ZeroedU32s::new(len);
            assert_eq!(array.atomics().len(), len);
            assert!(array.atomics().iter().all(|x| x.load(Relaxed) == 0));
            for (i, x) in array.atomics().iter().enumerate().step_by(997) {
                x.store(i as u32 + 1, Relaxed);
            }
            for (i, x) in array.atomics().iter().enumerate() {
                assert_eq!(x.load(Relaxed), if i % 997 == 0 { i as u32 + 1 } else { 0 });
            }
        }
    }
}
