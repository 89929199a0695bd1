// The forkjoin suite's three workloads (docs/workloads.md, suite forkjoin), written once
// for every C++ side (saturn-bench-forkjoin, forkjoin-tbb) over a `join(f, g)` that
// runs two void callables, possibly in parallel, and returns when both have ended. The
// Rust and Go peers are line-by-line translations of this file.
//
//   tree_sum_4m    a binary tree of 2^22 nodes (node i: value i * 2654435761 mod 2^32,
//                  children 2i+1 and 2i+2 when below 2^22, linked by pointers), summed
//                  recursively with one join per node that has two children;
//                  checksum = the sum.
//   quicksort_10m  10,000,000 uint32 (xorshift64 13/7/17 from 0x9E3779B97F4A7C15, the
//                  high 32 bits), Hoare partition around the median of three (swapped
//                  into the middle), one join per partition above 2,048 elements,
//                  sequential quicksort below (insertion sort at 16 or fewer);
//                  checksum = sum of a[i] * (i + 1), wrapping mod 2^64, top bit cleared.
//   matmul_512     C = A * B for 512 x 512 doubles, A[i][j] = (7i + 3j) % 11 - 5,
//                  B[i][j] = (5i + 2j) % 13 - 6, by quadrants: two phases of four
//                  sub-products each (phase 1: C11 += A11 B11, C12 += A11 B12,
//                  C21 += A21 B11, C22 += A21 B12; phase 2 the same with A12/A22 and
//                  B21/B22), each phase join(join(p1, p2), join(p3, p4)); 8 x 8 blocks by
//                  the plain i-k-j triple loop; checksum = sum of C[i][j] * ((i + j) % 7 + 1)
//                  as int64, wrapping mod 2^64, top bit cleared.
//
// `tasks` = 2 x the number of joins (each join runs two branches); ns_per_task = wall / tasks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace forkjoin {

// ------------------------------------------------------------------ tree_sum_4m
constexpr std::size_t k_tree_nodes = std::size_t{1} << 22;

struct node {
  std::uint64_t value;
  node* left;
  node* right;
};

inline std::vector<node> build_tree() {
  std::vector<node> t(k_tree_nodes);
  for (std::size_t i = 0; i < k_tree_nodes; ++i) {
    t[i].value = static_cast<std::uint32_t>(i * 2654435761u);
    t[i].left = 2 * i + 1 < k_tree_nodes ? &t[2 * i + 1] : nullptr;
    t[i].right = 2 * i + 2 < k_tree_nodes ? &t[2 * i + 2] : nullptr;
  }
  return t;
}

inline std::uint64_t tree_expected() {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < k_tree_nodes; ++i)
    s += static_cast<std::uint32_t>(i * 2654435761u);
  return s;
}

/// Joins in the tree: nodes with two children.
inline std::uint64_t tree_joins() {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < k_tree_nodes; ++i)
    n += 2 * i + 2 < k_tree_nodes;
  return n;
}

template <class Join>
std::uint64_t tree_sum(const node* n, Join& join) {
  if (n->left != nullptr && n->right != nullptr) {
    std::uint64_t a = 0, b = 0;
    join([&] { a = tree_sum(n->left, join); }, [&] { b = tree_sum(n->right, join); });
    return n->value + a + b;
  }
  std::uint64_t s = n->value;
  if (n->left != nullptr)
    s += tree_sum(n->left, join);
  return s;
}

// ------------------------------------------------------------------ quicksort_10m
constexpr std::size_t k_sort_n = 10'000'000;
constexpr std::size_t k_sort_cutoff = 2048;

inline std::vector<std::uint32_t> sort_input() {
  std::vector<std::uint32_t> v(k_sort_n);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e = static_cast<std::uint32_t>(x >> 32);
  }
  return v;
}

/// Median of a[0], a[n/2], a[n-1] moved to a[n/2]; Hoare partition around it. Returns
/// m, 0 < m < n: a[0, m) <= pivot <= a[m, n).
inline std::size_t partition(std::uint32_t* a, std::size_t n) {
  const std::size_t mid = n / 2;
  if (a[mid] < a[0])
    std::swap(a[mid], a[0]);
  if (a[n - 1] < a[0])
    std::swap(a[n - 1], a[0]);
  if (a[n - 1] < a[mid])
    std::swap(a[n - 1], a[mid]);
  const std::uint32_t p = a[mid];
  std::size_t i = 0, j = n - 1;
  for (;;) {
    while (a[i] < p)
      ++i;
    while (a[j] > p)
      --j;
    if (i >= j)
      return j + 1;
    std::swap(a[i], a[j]);
    ++i;
    --j;
  }
}

inline void insertion_sort(std::uint32_t* a, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t v = a[i];
    std::size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

inline void seq_sort(std::uint32_t* a, std::size_t n) {
  while (n > 16) {
    const std::size_t m = partition(a, n);
    seq_sort(a, m);
    a += m;
    n -= m;
  }
  insertion_sort(a, n);
}

/// Returns the number of joins.
template <class Join>
std::uint64_t par_sort(std::uint32_t* a, std::size_t n, Join& join) {
  if (n <= k_sort_cutoff) {
    seq_sort(a, n);
    return 0;
  }
  const std::size_t m = partition(a, n);
  std::uint64_t ja = 0, jb = 0;
  join([&] { ja = par_sort(a, m, join); }, [&] { jb = par_sort(a + m, n - m, join); });
  return 1 + ja + jb;
}

/// Checksum of a sorted array, or ~0 when it is not sorted.
inline std::uint64_t sort_checksum(const std::vector<std::uint32_t>& v) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0 && v[i - 1] > v[i])
      return ~std::uint64_t{0};
    s += std::uint64_t{v[i]} * (i + 1);
  }
  return s & 0x7FFF'FFFF'FFFF'FFFFull;
}

// ------------------------------------------------------------------ matmul_512
constexpr std::size_t k_mat_n = 512;
constexpr std::size_t k_mat_leaf = 8;

struct matrices {
  std::vector<double> a, b, c;
};

inline matrices mat_input() {
  matrices m{std::vector<double>(k_mat_n * k_mat_n), std::vector<double>(k_mat_n * k_mat_n),
             std::vector<double>(k_mat_n * k_mat_n, 0.0)};
  for (std::size_t i = 0; i < k_mat_n; ++i)
    for (std::size_t j = 0; j < k_mat_n; ++j) {
      m.a[i * k_mat_n + j] = double(int((7 * i + 3 * j) % 11) - 5);
      m.b[i * k_mat_n + j] = double(int((5 * i + 2 * j) % 13) - 6);
    }
  return m;
}

/// C[0,n)^2 += A[0,n)^2 * B[0,n)^2 on row-major views of stride k_mat_n. Returns joins.
template <class Join>
std::uint64_t mat_mul(double* c, const double* a, const double* b, std::size_t n, Join& join) {
  constexpr std::size_t s = k_mat_n;
  if (n <= k_mat_leaf) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k) {
        const double aik = a[i * s + k];
        for (std::size_t j = 0; j < n; ++j)
          c[i * s + j] += aik * b[k * s + j];
      }
    return 0;
  }
  const std::size_t h = n / 2;
  double* c11 = c;
  double* c12 = c + h;
  double* c21 = c + h * s;
  double* c22 = c + h * s + h;
  const double* a11 = a;
  const double* a12 = a + h;
  const double* a21 = a + h * s;
  const double* a22 = a + h * s + h;
  const double* b11 = b;
  const double* b12 = b + h;
  const double* b21 = b + h * s;
  const double* b22 = b + h * s + h;
  std::uint64_t j[8] = {};
  join([&] { join([&] { j[0] = mat_mul(c11, a11, b11, h, join); }, [&] { j[1] = mat_mul(c12, a11, b12, h, join); }); },
       [&] { join([&] { j[2] = mat_mul(c21, a21, b11, h, join); }, [&] { j[3] = mat_mul(c22, a21, b12, h, join); }); });
  join([&] { join([&] { j[4] = mat_mul(c11, a12, b21, h, join); }, [&] { j[5] = mat_mul(c12, a12, b22, h, join); }); },
       [&] { join([&] { j[6] = mat_mul(c21, a22, b21, h, join); }, [&] { j[7] = mat_mul(c22, a22, b22, h, join); }); });
  std::uint64_t total = 6;
  for (std::uint64_t x : j)
    total += x;
  return total;
}

inline std::uint64_t mat_checksum(const std::vector<double>& c) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < k_mat_n; ++i)
    for (std::size_t j = 0; j < k_mat_n; ++j)
      s += static_cast<std::int64_t>(c[i * k_mat_n + j]) * static_cast<std::int64_t>((i + j) % 7 + 1);
  return static_cast<std::uint64_t>(s) & 0x7FFF'FFFF'FFFF'FFFFull;
}

/// The reference result (sequential i-k-j over the whole matrix), computed once.
inline std::uint64_t mat_expected(const matrices& m) {
  std::vector<double> c(k_mat_n * k_mat_n, 0.0);
  for (std::size_t i = 0; i < k_mat_n; ++i)
    for (std::size_t k = 0; k < k_mat_n; ++k) {
      const double aik = m.a[i * k_mat_n + k];
      for (std::size_t j = 0; j < k_mat_n; ++j)
        c[i * k_mat_n + j] += aik * m.b[k * k_mat_n + j];
    }
  return mat_checksum(c);
}

}  // namespace forkjoin
