//! FASTA/FASTQ: any bytes read as records or are refused with an error (never a panic); the records written
//! back as FASTA read back the same.
#![no_main]

use bytepair::formats::fasta::FastaReader;
use libfuzzer_sys::fuzz_target;

/// Every record of `data`, or None when it is refused.
fn records(data: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut reader = FastaReader::new("fuzz.fa", Box::new(std::io::Cursor::new(data.to_vec())), None);
    let mut out = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(record)) => out.push(record),
            Ok(None) => return Some(out),
            Err(_) => return None,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(read) = records(data) else { return };
    let mut written = Vec::new();
    for (name, sequence) in &read {
        written.extend_from_slice(format!(">{name}\n").as_bytes());
        written.extend_from_slice(sequence);
        written.push(b'\n');
    }
    assert_eq!(records(&written), Some(read), "records written as FASTA read back otherwise");
});
