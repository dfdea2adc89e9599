//! The Rust side of `scripts/minhash_bench.py`: signs the shingle sets of
//! the shared input file with the pipeline's own min-wise family
//! (`src/methods/minwise.rs`, compiled in alone) on one core, and prints the
//! time. Built by the script with plain `rustc -C opt-level=3`, like the
//! release profile, so it needs no release build of the whole pipeline.
//!
//! Usage: minhash_bench SHINGLES_FILE FUNCTIONS SEED REPEATS [SKETCH_OUT]
//! The input is u32 LE document count, then per document a u32 LE shingle
//! count and that many u64 LE fingerprints. SKETCH_OUT, if given, receives
//! every document's sketch as u64 LE values, for the script's check against
//! its Python reimplementation of the definition.

#[path = "../src/methods/minwise.rs"]
mod minwise;

use std::io::Write;
use std::time::Instant;

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: minhash_bench SHINGLES_FILE FUNCTIONS SEED REPEATS [SKETCH_OUT]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).expect("readable shingles file");
    let functions: usize = args[2].parse().expect("FUNCTIONS is a number");
    let seed: u64 = args[3].parse().expect("SEED is a number");
    let repeats: usize = args[4].parse().expect("REPEATS is a number");
    let docs = u32_at(&bytes, 0) as usize;
    let mut sets: Vec<Vec<u64>> = Vec::with_capacity(docs);
    let mut at = 4;
    for _ in 0..docs {
        let n = u32_at(&bytes, at) as usize;
        at += 4;
        sets.push(bytes[at..at + 8 * n].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect());
        at += 8 * n;
    }
    let hasher = minwise::MinHasher::new(functions, seed);
    let mut best = f64::INFINITY;
    let mut sketches = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        sketches = sets.iter().map(|s| hasher.sketch(std::hint::black_box(s))).collect::<Vec<_>>();
        best = best.min(start.elapsed().as_secs_f64());
    }
    let shingles: usize = sets.iter().map(Vec::len).sum();
    println!("{best} {docs} {shingles}");
    if let Some(path) = args.get(5) {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("writable sketch file"));
        for s in sketches.iter().flatten() {
            for v in s {
                out.write_all(&v.to_le_bytes()).expect("write sketch");
            }
        }
    }
}
