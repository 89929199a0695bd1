/// \file
/// The small benchmark harness every saturn bench program uses (docs/workloads.md, "Output"):
/// the contract's flags (CLI11), warm-up + samples with the median reported, nearest-rank
/// percentiles, memory probes, a do-not-optimize barrier, and one JSON object per line on
/// stdout (diagnostics on stderr).
///
/// Why not Google Benchmark: the contract fixes the workloads, the sample protocol and the
/// output schema shared with the peers (Rust, Go, C), and several scenarios must run
/// whole-process (peak RSS, fresh child per sample); a 200-line harness keeps the saturn
/// side identical in shape to the peers' harness.
#pragma once

#include <CLI/CLI.hpp>

#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

/// Keeps `value` alive and opaque to the optimizer (both sides of every comparison).
template <class T>
inline void do_not_optimize(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
template <class T>
inline void do_not_optimize(T& value) {
  asm volatile("" : "+r,m"(value) : : "memory");
}

inline std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Spins on the monotonic clock (never sleeps) until `ns` have passed.
inline void busy_wait_ns(std::int64_t ns) {
  const std::int64_t start = now_ns();
  while (now_ns() - start < ns) {
  }
}

inline int default_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return 1;
}

/// The contract's common flags.
struct args {
  int threads = default_threads();
  int samples = 5;
  int warmup = 1;
  std::vector<std::string> scenarios;  // empty: all

  bool wants(const std::string& name) const {
    return scenarios.empty() || std::find(scenarios.begin(), scenarios.end(), name) != scenarios.end() ||
           std::find(scenarios.begin(), scenarios.end(), "all") != scenarios.end();
  }
};

/// Registers the common flags on `app`; `known` lists the scenario names accepted.
inline void add_common_flags(CLI::App& app, args& a, const std::vector<std::string>& known) {
  app.add_option("--threads", a.threads, "worker threads (default: CPUs in the affinity mask)")->check(CLI::PositiveNumber);
  app.add_option("--samples", a.samples, "measured samples (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--warmup", a.warmup, "unmeasured warm-up runs")->check(CLI::NonNegativeNumber);
  app.add_option("--scenario", a.scenarios, "scenario(s) to run, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember([&] {
        auto k = known;
        k.push_back("all");
        return k;
      }()));
}

/// Runs `body` warmup + samples times; returns the measured results (not the warm-ups).
template <class R>
std::vector<R> run_samples(const args& a, const std::function<R()>& body) {
  for (int i = 0; i < a.warmup; ++i)
    (void)body();
  std::vector<R> out;
  for (int i = 0; i < a.samples; ++i)
    out.push_back(body());
  return out;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0)
    return 0;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Index of the median element (by value) of `v`: the sample whose latencies are reported.
inline std::size_t median_index(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
  return idx[(idx.size() - 1) / 2];
}

/// Nearest-rank percentile (p in (0, 100]) of an already sorted vector.
inline double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return 0;
  std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  if (rank < 1)
    rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

inline long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/// Resident set size now, from /proc/self/statm, in bytes.
inline long current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

/// Builds one JSON Lines record; fields print in insertion order.
class record {
 public:
  record(const std::string& suite, const std::string& scenario, int threads) {
    str("suite", suite);
    str("scenario", scenario);
    str("runtime", "saturn");
    num("threads", threads);
  }
  record& str(const std::string& k, const std::string& v) {
    sep();
    m_out << '"' << k << "\":\"" << v << '"';
    return *this;
  }
  record& num(const std::string& k, double v, int precision = 6) {
    sep();
    char buf[64];
    if (v == static_cast<double>(static_cast<long long>(v)) && std::abs(v) < 9e15)
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%.*g", precision + 3, v);
    m_out << '"' << k << "\":" << buf;
    return *this;
  }
  record& num(const std::string& k, long long v) {
    sep();
    m_out << '"' << k << "\":" << v;
    return *this;
  }
  record& num(const std::string& k, int v) { return num(k, static_cast<long long>(v)); }
  record& num(const std::string& k, long v) { return num(k, static_cast<long long>(v)); }
  record& num(const std::string& k, unsigned long long v) { return num(k, static_cast<long long>(v)); }
  record& num(const std::string& k, unsigned long v) { return num(k, static_cast<long long>(v)); }
  /// Prints the record as one line on stdout and flushes.
  void emit() {
    std::printf("{%s}\n", m_out.str().c_str());
    std::fflush(stdout);
  }

 private:
  void sep() {
    if (m_first)
      m_first = false;
    else
      m_out << ',';
  }
  std::ostringstream m_out;
  bool m_first = true;
};

/// Prints a failure on stderr and exits 1 (a failed check is never reported as a number).
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "saturn-bench: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace bench
