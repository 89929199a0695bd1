//! forkjoin-tokio: the `forkjoin` suite of docs/workloads.md on Tokio.
//!
//!     forkjoin-tokio [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//!
//! Tokio has no join of closures; a Tokio user forks with `tokio::spawn(b)`, awaits `a`
//! inline, then awaits b's JoinHandle. Recursive async functions return a boxed future.
//! Spawned tasks are 'static: the tree is leaked once, the sort's and the product's
//! disjoint blocks travel as raw pointers. Every sample runs in a task on a worker of a
//! multi-thread runtime of N workers. Inputs and checksums: ../rayon/src/work.rs.

#[path = "../../rayon/src/work.rs"]
mod work;

use peer_common::Flags;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;
use work::*;

const PROGRAM: &str = "forkjoin-tokio";
type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

fn tree_sum(t: &'static [Node], i: usize) -> Boxed<u64> {
    Box::pin(async move {
        let n = &t[i];
        if n.left != NONE && n.right != NONE {
            let right = tokio::spawn(tree_sum(t, n.right));
            let a = tree_sum(t, n.left).await;
            let b = right.await.expect("task");
            return n.value + a + b;
        }
        let mut s = n.value;
        if n.left != NONE {
            s += tree_sum(t, n.left).await;
        }
        s
    })
}

fn par_sort(p: Ptr<u32>, len: usize) -> Boxed<u64> {
    Box::pin(async move {
        // safety: [p, p + len) belongs to this call alone (the halves below are disjoint).
        let a = unsafe { std::slice::from_raw_parts_mut(p.0, len) };
        if len <= SORT_CUTOFF {
            seq_sort(a);
            return 0;
        }
        let m = partition(a);
        let right = tokio::spawn(par_sort(Ptr(unsafe { p.0.add(m) }), len - m));
        let ja = par_sort(p, m).await;
        let jb = right.await.expect("task");
        1 + ja + jb
    })
}

fn mat_mul(c: Ptr<f64>, a: Ptr<f64>, b: Ptr<f64>, n: usize) -> Boxed<u64> {
    Box::pin(async move {
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
        let mut total = 6;
        for (x, y) in [((a11, b11), (a11, b12)), ((a12, b21), (a12, b22))] {
            let (z, w) = if x.0 .0 == a11.0 { ((a21, b11), (a21, b12)) } else { ((a22, b21), (a22, b22)) };
            // join(join(p1, p2), join(p3, p4)): the second half spawned, its second product too.
            let second = tokio::spawn(async move {
                let p4 = tokio::spawn(mat_mul(c22, w.0, w.1, h));
                let j3 = mat_mul(c21, z.0, z.1, h).await;
                j3 + p4.await.expect("task")
            });
            let p2 = tokio::spawn(mat_mul(c12, y.0, y.1, h));
            let j1 = mat_mul(c11, x.0, x.1, h).await;
            total += j1 + p2.await.expect("task") + second.await.expect("task");
        }
        total
    })
}

fn main() {
    let flags = Flags::parse(PROGRAM);
    flags.check_scenarios(PROGRAM, &["tree_sum_4m", "quicksort_10m", "matmul_512"]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .build()
        .expect("tokio runtime");
    let n = flags.warmup + flags.samples;
    let mut ok = true;
    if flags.wants("tree_sum_4m") {
        let tree: &'static [Node] = Box::leak(build_tree().into_boxed_slice());
        let joins = tree_joins();
        let s: Vec<_> = (0..n)
            .map(|_| {
                rt.block_on(rt.spawn(async move {
                    let t0 = Instant::now();
                    let sum = tree_sum(tree, 0).await;
                    (t0.elapsed().as_secs_f64(), sum, joins)
                }))
                .expect("driver")
            })
            .collect();
        ok &= report(PROGRAM, "tokio", "tree_sum_4m", flags.threads, flags.warmup, &s, tree_expected());
    }
    if flags.wants("quicksort_10m") {
        let input = sort_input();
        let mut reference = input.clone();
        reference.sort_unstable();
        let s: Vec<_> = (0..n)
            .map(|_| {
                let mut v = input.clone();
                let (p, len) = (Ptr(v.as_mut_ptr()), v.len());
                let (wall, joins) = rt
                    .block_on(rt.spawn(async move {
                        let t0 = Instant::now();
                        let joins = par_sort(p, len).await;
                        (t0.elapsed().as_secs_f64(), joins)
                    }))
                    .expect("driver");
                (wall, sort_checksum(&v), joins)
            })
            .collect();
        ok &= report(PROGRAM, "tokio", "quicksort_10m", flags.threads, flags.warmup, &s, sort_checksum(&reference));
    }
    if flags.wants("matmul_512") {
        let mut m = mat_input();
        let expect = mat_expected(&m);
        let s: Vec<_> = (0..n)
            .map(|_| {
                m.c.iter_mut().for_each(|x| *x = 0.0);
                let (c, a, b) = (Ptr(m.c.as_mut_ptr()), Ptr(m.a.as_mut_ptr()), Ptr(m.b.as_mut_ptr()));
                let (wall, joins) = rt
                    .block_on(rt.spawn(async move {
                        let t0 = Instant::now();
                        let joins = mat_mul(c, a, b, MAT_N).await;
                        (t0.elapsed().as_secs_f64(), joins)
                    }))
                    .expect("driver");
                (wall, mat_checksum(&m.c), joins)
            })
            .collect();
        ok &= report(PROGRAM, "tokio", "matmul_512", flags.threads, flags.warmup, &s, expect);
    }
    if !ok {
        std::process::exit(1);
    }
}
