//! Runtime CPU-feature dispatch: which instruction set the kernels (the block pre-tokenizer's byte
//! classification, `pretokenize/blocks.rs`; the transcoder of UCS-2 strs, `utf8.rs`, which also needs
//! AVX-512 VBMI2) use on this machine.
//!
//! The level is detected once, at first use: AVX-512BW, else AVX2, else the portable code (plain 64-bit words,
//! any CPU). Every level computes the same masks, so ids never depend on the machine; the tests run each level
//! this CPU has against the portable one. `BYTEPAIR_SIMD=portable` (or `avx2`) in the environment caps the level
//! — to check the portable path on a machine that has more, or to rule the vector code out when hunting a
//! problem; a level the CPU lacks is never used, whatever is asked. `set_level` does the same at run time (for
//! tests: the Python tests switch levels in one process).

use std::sync::atomic::{AtomicU8, Ordering};

/// The instruction sets the kernels have code for, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// 64-bit integer code only: any CPU.
    Portable = 0,
    /// x86-64 with AVX2 (and BMI1/2, POPCNT, which every AVX2 CPU has).
    Avx2 = 1,
    /// x86-64 with AVX-512F and AVX-512BW.
    Avx512 = 2,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Portable, Level::Avx2, Level::Avx512];

    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|level| level.name() == name.trim().to_ascii_lowercase())
    }

    fn from_u8(value: u8) -> Level {
        match value {
            1 => Level::Avx2,
            2 => Level::Avx512,
            _ => Level::Portable,
        }
    }
}

/// `LEVEL` before the first `level()`.
const UNSET: u8 = u8::MAX;
static LEVEL: AtomicU8 = AtomicU8::new(UNSET);

/// The best level this CPU has.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return Level::Avx2;
        }
    }
    Level::Portable
}

/// The level the kernels use: the detected one, capped by `BYTEPAIR_SIMD` (read at the first call) or by
/// `set_level`.
#[inline]
pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        UNSET => {
            let asked = std::env::var("BYTEPAIR_SIMD").ok().and_then(|name| Level::from_name(&name));
            let level = asked.map_or(detected(), |asked| asked.min(detected()));
            // Another thread may have stored one meanwhile: the same value, or `set_level`'s, which wins.
            let _ = LEVEL.compare_exchange(UNSET, level as u8, Ordering::Relaxed, Ordering::Relaxed);
            Level::from_u8(LEVEL.load(Ordering::Relaxed))
        }
        value => Level::from_u8(value),
    }
}

/// Uses `wanted` from now on, or the best level below it that this CPU has; returns the level now in use.
/// Encodings already running keep the level they started with.
pub fn set_level(wanted: Level) -> Level {
    let level = wanted.min(detected());
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_capped_by_the_cpu_and_named_both_ways() {
        for level in Level::ALL {
            assert_eq!(Level::from_name(level.name()), Some(level));
            assert_eq!(Level::from_name(&level.name().to_uppercase()), Some(level));
        }
        assert_eq!(Level::from_name("sse9"), None);
        let before = level();
        assert_eq!(set_level(Level::Portable), Level::Portable);
        assert_eq!(level(), Level::Portable);
        assert_eq!(set_level(Level::Avx512), detected());
        set_level(before);
    }
}
