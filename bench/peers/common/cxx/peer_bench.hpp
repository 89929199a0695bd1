/// \file
/// What every native (C++) peer program of bench/peers shares: the contract's common
/// flags (docs/workloads.md, "Common flags"), the monotonic clock and the busy loop,
/// nearest-rank percentiles, medians, memory probes and JSON Lines output.
///
/// Header-only on purpose: each peer is one translation unit built by
/// bench/peers/build-native.sh with a single g++ call, no library to link.
/// Nothing here is thread-safe unless it says so; the peers call it from main.
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace peer {

/// CLOCK_MONOTONIC in nanoseconds (the vDSO clock every peer and saturn read).
/// Any thread.
inline std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// The contract's "busy loop of D µs": spins on the monotonic clock, never sleeps.
/// Any thread.
inline void spin_for_ns(std::int64_t ns) {
  const std::int64_t until = now_ns() + ns;
  while (now_ns() < until) {
  }
}

/// CPUs this process may run on (sched_getaffinity), the contract's default --threads.
inline int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

/// Prints `what` and the usage line on stderr and exits with status 2.
[[noreturn]] inline void usage_error(std::string_view usage, std::string_view what) {
  std::fprintf(stderr, "error: %.*s\nusage: %.*s\n", int(what.size()), what.data(),
               int(usage.size()), usage.data());
  std::exit(2);
}

/// The parsed command line: the common flags, the positional arguments (ring's N LAPS)
/// and any other `--name value` a program declared in `extra_flags`.
struct options {
  int threads = allowed_cpus();
  int samples = 5;
  int warmup = 1;
  std::vector<std::string> scenarios;  ///< empty: all of them
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> extra;

  /// True when `name` was asked for (no --scenario, or "all", or listed).
  bool wants(std::string_view name) const {
    if (scenarios.empty()) return true;
    for (const auto& s : scenarios)
      if (s == name || s == "all") return true;
    return false;
  }

  /// The value of an extra flag (the last one given), or `fallback`.
  std::string value_of(std::string_view name, std::string fallback) const {
    for (auto it = extra.rbegin(); it != extra.rend(); ++it)
      if (it->first == name) return it->second;
    return fallback;
  }
};

/// Parses a non-negative decimal integer or exits with a usage error.
inline long long parse_count(std::string_view usage, std::string_view flag, const char* text) {
  if (text == nullptr || *text == '\0') usage_error(usage, std::string(flag) + " needs a number");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v < 0 || errno != 0)
    usage_error(usage, std::string(flag) + ": not a non-negative integer: " + text);
  return v;
}

/// Parses `--threads N --samples N --warmup N --scenario A,B` (also as `--flag=value`),
/// the flags named in `extra_flags` (each takes one value) and positional arguments.
/// Exits with status 2 on anything else.
inline options parse_options(int argc, char** argv, std::string_view usage,
                             std::vector<std::string_view> extra_flags = {}) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, 2) != "--") {
      o.positional.emplace_back(arg);
      continue;
    }
    std::string name(arg.substr(2));
    std::string value;
    bool have_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      have_value = true;
    } else if (i + 1 < argc) {
      value = argv[++i];
      have_value = true;
    }
    if (!have_value) usage_error(usage, "--" + name + " needs a value");
    if (name == "threads") {
      o.threads = int(parse_count(usage, "--threads", value.c_str()));
    } else if (name == "samples") {
      o.samples = int(parse_count(usage, "--samples", value.c_str()));
    } else if (name == "warmup") {
      o.warmup = int(parse_count(usage, "--warmup", value.c_str()));
    } else if (name == "scenario") {
      std::size_t from = 0;
      while (from <= value.size()) {
        std::size_t comma = std::min(value.find(',', from), value.size());
        if (comma > from) o.scenarios.push_back(value.substr(from, comma - from));
        from = comma + 1;
      }
    } else if (std::find(extra_flags.begin(), extra_flags.end(), name) != extra_flags.end()) {
      o.extra.emplace_back(name, value);
    } else {
      usage_error(usage, "unknown flag --" + name);
    }
  }
  if (o.threads < 1) usage_error(usage, "--threads must be at least 1");
  if (o.samples < 1) usage_error(usage, "--samples must be at least 1");
  return o;
}

/// Exits with a usage error when --scenario names something not in `known`.
inline void check_scenarios(const options& o, std::string_view usage,
                            const std::vector<std::string_view>& known) {
  for (const auto& s : o.scenarios)
    if (s != "all" && std::find(known.begin(), known.end(), s) == known.end())
      usage_error(usage, "unknown scenario " + s);
}

/// Nearest-rank percentile `p` (0-100] of an ascending vector: the value at rank
/// ceil(p/100 * n), 1-based. 0 for an empty vector.
inline std::int64_t nearest_rank(const std::vector<std::int64_t>& ascending, double p) {
  const std::size_t n = ascending.size();
  if (n == 0) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * double(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return ascending[rank - 1];
}

/// The median of `v` (the mean of the two middle values for an even count).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Index of the median element of `keys` (the lower middle one for an even count):
/// which sample the percentiles are taken from.
inline std::size_t median_position(const std::vector<double>& keys) {
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  return order[(order.size() - 1) / 2];
}

/// Peak resident set of this process in KiB (getrusage ru_maxrss).
inline long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/// Current resident set in bytes (/proc/self/statm, second field × page size).
inline long long rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * sysconf(_SC_PAGESIZE) : 0;
}

/// One JSON Lines record, keys in the order they are added; `print` writes it and a
/// newline to stdout and flushes (so a runner reading a pipe sees it at once).
class json_line {
 public:
  json_line& add(const char* key, std::string_view text) {
    start(key);
    m_text += '"';
    for (char c : text) {
      if (c == '"' || c == '\\') m_text += '\\';
      m_text += c;
    }
    m_text += '"';
    return *this;
  }
  json_line& add(const char* key, const char* text) { return add(key, std::string_view(text)); }
  json_line& add(const char* key, long long n) {
    start(key);
    m_text += std::to_string(n);
    return *this;
  }
  json_line& add(const char* key, int n) { return add(key, (long long)n); }
  json_line& add(const char* key, long n) { return add(key, (long long)n); }
  json_line& add(const char* key, unsigned long long n) {
    start(key);
    m_text += std::to_string(n);
    return *this;
  }
  /// A real number with `decimals` digits after the point (a non-finite one is dropped:
  /// the contract omits what does not apply rather than printing null).
  json_line& add(const char* key, double x, int decimals) {
    if (!std::isfinite(x)) return *this;
    start(key);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    m_text += buf;
    return *this;
  }
  void print() {
    m_text += "}\n";
    std::fwrite(m_text.data(), 1, m_text.size(), stdout);
    std::fflush(stdout);
  }

 private:
  void start(const char* key) {
    m_text += m_text.size() > 1 ? ",\"" : "\"";
    m_text += key;
    m_text += "\":";
  }
  std::string m_text = "{";
};

}  // namespace peer
