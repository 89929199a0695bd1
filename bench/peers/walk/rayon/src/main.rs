//! walk-rayon: the `walk` suite of docs/workloads.md with rayon.
//!
//!     walk-rayon [--threads N] ROOT
//!
//! Prints `<N> file(s)` and `<M> directories(s)` (M counts ROOT). A directory's
//! entries come from `fs::read_dir`; their type from the entry itself (d_type), so
//! symlinks are never followed and count as files. Subdirectories are walked in
//! parallel with `par_iter` on rayon's global pool (one thread per CPU unless
//! `--threads`). An unreadable directory: a message on stderr, exit 1.

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Default)]
struct Totals {
    files: AtomicU64,
    dirs: AtomicU64,
}

/// Counts `dir`'s entries into `totals`, then walks its subdirectories in parallel.
/// Err: the path that could not be read and why.
fn walk(dir: &Path, totals: &Totals) -> Result<(), String> {
    let why = |p: &Path, e: std::io::Error| format!("cannot read {}: {e}", p.display());
    let mut subdirs: Vec<PathBuf> = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).map_err(|e| why(dir, e))? {
        let entry = entry.map_err(|e| why(dir, e))?;
        let kind = entry.file_type().map_err(|e| why(&entry.path(), e))?;
        if kind.is_dir() {
            subdirs.push(entry.path());
        } else {
            files += 1;
        }
    }
    totals.files.fetch_add(files, Relaxed);
    totals.dirs.fetch_add(subdirs.len() as u64, Relaxed);
    subdirs.par_iter().try_for_each(|d| walk(d, totals))
}

fn usage() -> ! {
    eprintln!("usage: walk-rayon [--threads N] ROOT");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut root = None;
    while let Some(a) = args.next() {
        if a == "--threads" {
            let n: usize = args.next().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or_else(|| usage());
            rayon::ThreadPoolBuilder::new().num_threads(n).build_global().expect("rayon pool");
        } else if root.is_none() {
            root = Some(PathBuf::from(a));
        } else {
            usage();
        }
    }
    let root = root.unwrap_or_else(|| usage());
    let totals = Totals::default();
    totals.dirs.store(1, Relaxed); // ROOT
    if let Err(e) = walk(&root, &totals) {
        eprintln!("walk-rayon: {e}");
        std::process::exit(1);
    }
    println!("{} file(s)\n{} directories(s)", totals.files.load(Relaxed), totals.dirs.load(Relaxed));
}
