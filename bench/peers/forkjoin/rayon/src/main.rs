//! forkjoin-rayon: the `forkjoin` suite of docs/workloads.md on rayon.
//!
//!     forkjoin-rayon [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//!
//! A join is `rayon::join(a, b)`; everything runs inside `pool.install` on a pool of N
//! threads. Inputs, sequential parts and checksums: src/work.rs.

mod work;

use peer_common::Flags;
use std::time::Instant;
use work::*;

const PROGRAM: &str = "forkjoin-rayon";

fn tree_sum(t: &[Node], i: usize) -> u64 {
    let n = &t[i];
    if n.left != NONE && n.right != NONE {
        let (a, b) = rayon::join(|| tree_sum(t, n.left), || tree_sum(t, n.right));
        return n.value + a + b;
    }
    let mut s = n.value;
    if n.left != NONE {
        s += tree_sum(t, n.left);
    }
    s
}

fn par_sort(a: &mut [u32]) -> u64 {
    if a.len() <= SORT_CUTOFF {
        seq_sort(a);
        return 0;
    }
    let m = partition(a);
    let (l, r) = a.split_at_mut(m);
    let (ja, jb) = rayon::join(|| par_sort(l), || par_sort(r));
    1 + ja + jb
}

fn mat_mul(c: Ptr<f64>, a: Ptr<f64>, b: Ptr<f64>, n: usize) -> u64 {
    if n <= MAT_LEAF {
        unsafe { mat_leaf(c.0, a.0, b.0, n) };
        return 0;
    }
    let h = n / 2;
    let s = MAT_N;
    let q = |p: Ptr<f64>, r: usize, col: usize| Ptr(unsafe { p.0.add(r * h * s + col * h) });
    let (c11, c12, c21, c22) = (q(c, 0, 0), q(c, 0, 1), q(c, 1, 0), q(c, 1, 1));
    let (a11, a12, a21, a22) = (q(a, 0, 0), q(a, 0, 1), q(a, 1, 0), q(a, 1, 1));
    let (b11, b12, b21, b22) = (q(b, 0, 0), q(b, 0, 1), q(b, 1, 0), q(b, 1, 1));
    let ((j0, j1), (j2, j3)) = rayon::join(
        || rayon::join(|| mat_mul(c11, a11, b11, h), || mat_mul(c12, a11, b12, h)),
        || rayon::join(|| mat_mul(c21, a21, b11, h), || mat_mul(c22, a21, b12, h)),
    );
    let ((j4, j5), (j6, j7)) = rayon::join(
        || rayon::join(|| mat_mul(c11, a12, b21, h), || mat_mul(c12, a12, b22, h)),
        || rayon::join(|| mat_mul(c21, a22, b21, h), || mat_mul(c22, a22, b22, h)),
    );
    6 + j0 + j1 + j2 + j3 + j4 + j5 + j6 + j7
}

fn main() {
    let flags = Flags::parse(PROGRAM);
    flags.check_scenarios(PROGRAM, &["tree_sum_4m", "quicksort_10m", "matmul_512"]);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(flags.threads).build().expect("rayon pool");
    let n = flags.warmup + flags.samples;
    let mut ok = true;
    if flags.wants("tree_sum_4m") {
        let tree = build_tree();
        let joins = tree_joins();
        let s: Vec<_> = (0..n)
            .map(|_| {
                pool.install(|| {
                    let t0 = Instant::now();
                    let sum = tree_sum(&tree, 0);
                    (t0.elapsed().as_secs_f64(), sum, joins)
                })
            })
            .collect();
        ok &= report(PROGRAM, "rayon", "tree_sum_4m", flags.threads, flags.warmup, &s, tree_expected());
    }
    if flags.wants("quicksort_10m") {
        let input = sort_input();
        let mut reference = input.clone();
        reference.sort_unstable();
        let s: Vec<_> = (0..n)
            .map(|_| {
                let mut v = input.clone();
                pool.install(|| {
                    let t0 = Instant::now();
                    let joins = par_sort(&mut v);
                    let wall = t0.elapsed().as_secs_f64();
                    (wall, sort_checksum(&v), joins)
                })
            })
            .collect();
        ok &= report(PROGRAM, "rayon", "quicksort_10m", flags.threads, flags.warmup, &s, sort_checksum(&reference));
    }
    if flags.wants("matmul_512") {
        let mut m = mat_input();
        let expect = mat_expected(&m);
        let s: Vec<_> = (0..n)
            .map(|_| {
                m.c.iter_mut().for_each(|x| *x = 0.0);
                let (c, a, b) = (Ptr(m.c.as_mut_ptr()), Ptr(m.a.as_mut_ptr()), Ptr(m.b.as_mut_ptr()));
                let (wall, joins) = pool.install(|| {
                    let t0 = Instant::now();
                    let joins = mat_mul(c, a, b, MAT_N);
                    (t0.elapsed().as_secs_f64(), joins)
                });
                (wall, mat_checksum(&m.c), joins)
            })
            .collect();
        ok &= report(PROGRAM, "rayon", "matmul_512", flags.threads, flags.warmup, &s, expect);
    }
    if !ok {
        std::process::exit(1);
    }
}
