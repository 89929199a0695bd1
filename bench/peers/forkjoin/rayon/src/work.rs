//! The forkjoin suite's inputs, sequential parts and checksums (docs/workloads.md, suite
//! forkjoin): a line-by-line translation of bench/peers/common/cxx/forkjoin_work.hpp,
//! shared by forkjoin-rayon and forkjoin-tokio (which include this file).

pub const TREE_NODES: usize = 1 << 22;
pub const SORT_N: usize = 10_000_000;
pub const SORT_CUTOFF: usize = 2048;
pub const MAT_N: usize = 512;
pub const MAT_LEAF: usize = 8;

/// A tree node; children are indices into the node array (NONE: no child), the same
/// layout as the C++ side's array of nodes linked by pointers.
pub struct Node {
    pub value: u64,
    pub left: usize,
    pub right: usize,
}
pub const NONE: usize = usize::MAX;

/// Node i: value i * 2654435761 mod 2^32, children 2i+1 and 2i+2 below 2^22.
pub fn build_tree() -> Vec<Node> {
    (0..TREE_NODES)
        .map(|i| Node {
            value: (i as u32).wrapping_mul(2654435761) as u64,
            left: if 2 * i + 1 < TREE_NODES { 2 * i + 1 } else { NONE },
            right: if 2 * i + 2 < TREE_NODES { 2 * i + 2 } else { NONE },
        })
        .collect()
}

pub fn tree_expected() -> u64 {
    (0..TREE_NODES).map(|i| (i as u32).wrapping_mul(2654435761) as u64).sum()
}

pub fn tree_joins() -> u64 {
    (0..TREE_NODES).filter(|i| 2 * i + 2 < TREE_NODES).count() as u64
}

pub fn sort_input() -> Vec<u32> {
    let mut x: u64 = 0x9E3779B97F4A7C15;
    (0..SORT_N)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        })
        .collect()
}

/// Median of three moved to the middle; Hoare partition. Returns m, 0 < m < n.
pub fn partition(a: &mut [u32]) -> usize {
    let n = a.len();
    let mid = n / 2;
    if a[mid] < a[0] {
        a.swap(mid, 0);
    }
    if a[n - 1] < a[0] {
        a.swap(n - 1, 0);
    }
    if a[n - 1] < a[mid] {
        a.swap(n - 1, mid);
    }
    let p = a[mid];
    let (mut i, mut j) = (0usize, n - 1);
    loop {
        while a[i] < p {
            i += 1;
        }
        while a[j] > p {
            j -= 1;
        }
        if i >= j {
            return j + 1;
        }
        a.swap(i, j);
        i += 1;
        j -= 1;
    }
}

pub fn insertion_sort(a: &mut [u32]) {
    for i in 1..a.len() {
        let v = a[i];
        let mut j = i;
        while j > 0 && a[j - 1] > v {
            a[j] = a[j - 1];
            j -= 1;
        }
        a[j] = v;
    }
}

pub fn seq_sort(mut a: &mut [u32]) {
    while a.len() > 16 {
        let m = partition(a);
        let (l, r) = a.split_at_mut(m);
        seq_sort(l);
        a = r;
    }
    insertion_sort(a);
}

pub fn sort_checksum(v: &[u32]) -> u64 {
    let mut s: u64 = 0;
    for i in 0..v.len() {
        if i > 0 && v[i - 1] > v[i] {
            return u64::MAX;
        }
        s = s.wrapping_add((v[i] as u64).wrapping_mul(i as u64 + 1));
    }
    s & 0x7FFF_FFFF_FFFF_FFFF
}

pub struct Matrices {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub c: Vec<f64>,
}

pub fn mat_input() -> Matrices {
    let n = MAT_N;
    let mut m = Matrices { a: vec![0.0; n * n], b: vec![0.0; n * n], c: vec![0.0; n * n] };
    for i in 0..n {
        for j in 0..n {
            m.a[i * n + j] = (((7 * i + 3 * j) % 11) as i64 - 5) as f64;
            m.b[i * n + j] = (((5 * i + 2 * j) % 13) as i64 - 6) as f64;
        }
    }
    m
}

/// The 8 x 8 leaf on views of stride MAT_N (raw pointers: the quadrants of C that run
/// in parallel are disjoint, which slices cannot express).
///
/// # Safety
/// c, a, b point at n x n blocks of MAT_N-stride matrices; no other thread writes c's block.
pub unsafe fn mat_leaf(c: *mut f64, a: *const f64, b: *const f64, n: usize) {
    let s = MAT_N;
    for i in 0..n {
        for k in 0..n {
            let aik = *a.add(i * s + k);
            for j in 0..n {
                *c.add(i * s + j) += aik * *b.add(k * s + j);
            }
        }
    }
}

pub fn mat_checksum(c: &[f64]) -> u64 {
    let mut s: i64 = 0;
    for i in 0..MAT_N {
        for j in 0..MAT_N {
            s = s.wrapping_add((c[i * MAT_N + j] as i64).wrapping_mul(((i + j) % 7 + 1) as i64));
        }
    }
    (s as u64) & 0x7FFF_FFFF_FFFF_FFFF
}

pub fn mat_expected(m: &Matrices) -> u64 {
    let n = MAT_N;
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = m.a[i * n + k];
            for j in 0..n {
                c[i * n + j] += aik * m.b[k * n + j];
            }
        }
    }
    mat_checksum(&c)
}

/// A pointer that may cross threads (the blocks it points at are disjoint per task).
#[derive(Clone, Copy)]
pub struct Ptr<T>(pub *mut T);
unsafe impl<T> Send for Ptr<T> {}
unsafe impl<T> Sync for Ptr<T> {}

/// One scenario's samples: checks every checksum, prints the JSON line; false on a mismatch.
pub fn report(program: &str, runtime: &str, scenario: &str, threads: usize, warmup: usize,
              samples: &[(f64, u64, u64)], expect: u64) -> bool {
    let mut walls = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        if s.1 != expect {
            eprintln!("{program}: {scenario} checksum {}, expected {expect}", s.1);
            return false;
        }
        if k >= warmup {
            walls.push(s.0);
        }
    }
    let wall = peer_common::median(&walls);
    let tasks = 2 * samples[0].2;
    peer_common::Line::new()
        .s("suite", "forkjoin")
        .s("scenario", scenario)
        .s("runtime", runtime)
        .i("threads", threads as u64)
        .i("tasks", tasks)
        .f("wall_s", wall, 6)
        .f("ns_per_task", wall * 1e9 / tasks as f64, 2)
        .i("checksum", expect)
        .print();
    true
}
