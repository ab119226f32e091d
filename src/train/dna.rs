//! Nucleotide sequences into a word counter: each cleaned piece of a sequence is one word (no
//! pre-tokenization), and with `reverse_complement` its reverse complement is counted right after it, so
//! both strands are learned.

use super::counts::WordCounter;
use crate::error::Result;
use crate::formats::fasta::{self, FastaReader, SequenceOptions};

/// What was read: records (sequences), pieces counted (windows, stretches; reverse complements included),
/// and bases counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SequenceStats {
    pub records: u64,
    pub pieces: u64,
    pub bases: u64,
}

/// Whether each piece's reverse complement is counted right after it, and what A pairs with: T in DNA, U in RNA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherStrand {
    No,
    Dna,
    Rna,
}

/// Cleans one sequence (as read, or given as text) and counts its pieces.
pub fn add_sequence(
    counter: &mut WordCounter,
    name: &str,
    seq: Vec<u8>,
    options: &SequenceOptions,
    reverse_complement: OtherStrand,
    stats: &mut SequenceStats,
) -> Result<()> {
    stats.records += 1;
    fasta::pieces(name, seq, options, |_, piece| {
        let rc = match reverse_complement {
            OtherStrand::No => None,
            OtherStrand::Dna => Some(fasta::reverse_complement(&piece, false)),
            OtherStrand::Rna => Some(fasta::reverse_complement(&piece, true)),
        };
        for strand in std::iter::once(piece).chain(rc) {
            stats.pieces += 1;
            stats.bases += strand.len() as u64;
            // Sequence characters are ASCII (checked when read).
            let word = String::from_utf8(strand).expect("sequences are ASCII");
            counter.add_counted_owned(word, 1)?;
        }
        Ok(())
    })
}

/// Reads a FASTA/FASTQ file and counts the pieces of every record. `on_progress` gets the bases read so far
/// after each record; an error from it (Ctrl-C) stops reading.
pub fn add_fasta(
    counter: &mut WordCounter,
    path: &str,
    options: &SequenceOptions,
    reverse_complement: OtherStrand,
    mut on_progress: impl FnMut(u64) -> Result<()>,
) -> Result<SequenceStats> {
    let mut reader = FastaReader::open(path)?;
    let mut stats = SequenceStats::default();
    while let Some((name, seq)) = reader.next_record()? {
        add_sequence(counter, &name, seq, options, reverse_complement, &mut stats)?;
        on_progress(reader.bases)?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::fasta::Ambiguous;
    use crate::pretokenize::Pattern;

    #[test]
    fn pieces_and_their_reverse_complements_are_counted_in_order() {
        let mut counter = WordCounter::new(Pattern::None, &[], false, 1).unwrap();
        let options = SequenceOptions { uppercase: true, ambiguous: Ambiguous::Split, chunk_length: Some(4) };
        let mut stats = SequenceStats::default();
        add_sequence(&mut counter, "r", b"aaccNNNggttA".to_vec(), &options, OtherStrand::Dna, &mut stats).unwrap();
        let words: Vec<(String, u64)> = counter.words().unwrap().iter().map(|(w, c)| (w.clone(), *c)).collect();
        let want = [("AACC", 2), ("GGTT", 2), ("A", 1), ("T", 1)];
        assert_eq!(words, want.map(|(w, c)| (w.to_string(), c)));
        assert_eq!(stats, SequenceStats { records: 1, pieces: 6, bases: 18 });
    }
}
