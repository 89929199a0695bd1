// The `pg` suite's workload (docs/workloads.md, "pg"), shared by saturn-bench-pg's
// scenarios: the SQL texts, the ids asked for, the per-row checksums and the sample
// record (wall time, the process's own CPU from getrusage, latencies).
#pragma once

#include "harness.hpp"

#include <saturn/pg.hpp>

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgbench {

namespace pg = saturn::pg;

inline constexpr int roundtrip_queries = 10'000;
inline constexpr int pipelined_queries = 10'000;
inline constexpr int fetch_rows = 100'000;

/// One item by its primary key: the query of roundtrip and pipelined_10k.
inline constexpr std::string_view point_sql = "SELECT id, name, price FROM items WHERE id = $1";
/// The 100,000-row fetch (no jsonb column: every driver decodes these natively).
inline constexpr std::string_view fetch_sql =
    "SELECT id, name, category, price, quantity, active, rating_score, rating_count FROM items WHERE id <= 100000";

/// The id of query k of a sample: every id of 1..100,000 once per 100,000 queries.
inline std::int32_t item_id(int k) { return static_cast<std::int32_t>(1 + (std::int64_t{k} * 7919) % 100'000); }

/// What one measured (or warm-up) sample did.
struct sample {
  double wall_s = 0;
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  std::int64_t checksum = 0;
  std::vector<double> latencies_us;  // roundtrip only
};

inline double tv_s(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

/// Wall time and the process's user/system CPU (every thread) between start() and stop().
class meter {
 public:
  void start() {
    getrusage(RUSAGE_SELF, &m_u0);
    m_t0 = bench::now_ns();
  }
  void stop(sample& s) const {
    const std::int64_t t1 = bench::now_ns();
    rusage u1{};
    getrusage(RUSAGE_SELF, &u1);
    s.wall_s = static_cast<double>(t1 - m_t0) / 1e9;
    s.cpu_user_s = tv_s(u1.ru_utime) - tv_s(m_u0.ru_utime);
    s.cpu_sys_s = tv_s(u1.ru_stime) - tv_s(m_u0.ru_stime);
  }

 private:
  rusage m_u0{};
  std::int64_t m_t0 = 0;
};

}  // namespace pgbench
