// saturn-bench-pg: the `pg` suite's saturn side (docs/workloads.md, "pg"). One
// pg::connection (the extended protocol, statements cached per connection) on a
// thread_pool in io mode, against the runner's shared PostgreSQL:
//   roundtrip      10,000 single-row queries, one after the other (co_await conn.query)
//   pipelined_10k  the same 10,000 queries handed to conn.pipeline() at once
//   fetch_100k     one query returning 100,000 rows (conn.query), every column decoded
// Every sample's checksum (sum over rows of the workload's per-row sum) must equal the
// first sample's; the runner compares it with the server's own SQL sum. CPU is the
// process's user + system time over the measured samples (getrusage RUSAGE_SELF).
//
//   saturn-bench-pg --url postgres://user:pw@127.0.0.1:P/db [--threads N] [--samples N]
//                   [--warmup N] [--scenario roundtrip,pipelined_10k,fetch_100k]
#include "workload.hpp"

#include <saturn/sched/thread_pool.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

namespace {

using namespace pgbench;
using saturn::task;

const std::vector<std::string> scenarios = {"roundtrip", "pipelined_10k", "fetch_100k"};

std::string describe(const pg::error& e) { return e.what(); }

// The point query's row: id + price + length(name).
std::string point_sum(const pg::rows& r, std::int32_t want_id, std::int64_t& sum) {
  if (r.size() != 1)
    return "id " + std::to_string(want_id) + ": " + std::to_string(r.size()) + " rows, want 1";
  const pg::row row = r[0];
  auto id = row.get<std::int32_t>(0);
  auto name = row.get<std::string_view>(1);
  auto price = row.get<std::int32_t>(2);
  if (!id || !name || !price)
    return "id " + std::to_string(want_id) + ": a column did not decode";
  if (*id != want_id)
    return "asked for id " + std::to_string(want_id) + ", got " + std::to_string(*id);
  sum += *id + *price + static_cast<std::int64_t>(name->size());
  return {};
}

task<std::string> roundtrip(pg::connection& c, sample& s) {
  s.latencies_us.reserve(roundtrip_queries);
  meter m;
  m.start();
  for (int k = 0; k < roundtrip_queries; ++k) {
    const std::int32_t id = item_id(k);
    const std::int64_t t0 = bench::now_ns();
    auto r = co_await c.query(point_sql, id);
    s.latencies_us.push_back(static_cast<double>(bench::now_ns() - t0) / 1e3);
    if (!r)
      co_return describe(r.err());
    if (auto bad = point_sum(*r, id, s.checksum); !bad.empty())
      co_return bad;
  }
  m.stop(s);
  co_return std::string();
}

task<std::string> pipelined(pg::connection& c, sample& s) {
  meter m;
  m.start();
  std::vector<pg::statement> qs;
  qs.reserve(pipelined_queries);
  for (int k = 0; k < pipelined_queries; ++k) {
    pg::statement st{std::string(point_sql), {}};
    st.args.add(item_id(k));
    qs.push_back(std::move(st));
  }
  auto r = co_await c.pipeline(std::move(qs));
  if (!r)
    co_return describe(r.err());
  if (r->size() != static_cast<std::size_t>(pipelined_queries))
    co_return std::to_string(r->size()) + " results for " + std::to_string(pipelined_queries) + " queries";
  for (int k = 0; k < pipelined_queries; ++k) {
    const auto& one = (*r)[static_cast<std::size_t>(k)];
    if (!one)
      co_return describe(one.err());
    if (auto bad = point_sum(*one, item_id(k), s.checksum); !bad.empty())
      co_return bad;
  }
  m.stop(s);
  co_return std::string();
}

task<std::string> fetch(pg::connection& c, sample& s) {
  meter m;
  m.start();
  auto r = co_await c.query(fetch_sql);
  if (!r)
    co_return describe(r.err());
  if (r->size() != static_cast<std::size_t>(fetch_rows))
    co_return std::to_string(r->size()) + " rows, want " + std::to_string(fetch_rows);
  for (const pg::row row : *r) {
    auto id = row.get<std::int32_t>(0);
    auto name = row.get<std::string_view>(1);
    auto category = row.get<std::string_view>(2);
    auto price = row.get<std::int32_t>(3);
    auto quantity = row.get<std::int32_t>(4);
    auto active = row.get<bool>(5);
    auto score = row.get<std::int32_t>(6);
    auto count = row.get<std::int32_t>(7);
    if (!id || !name || !category || !price || !quantity || !active || !score || !count)
      co_return "a column of a fetched row did not decode";
    s.checksum += std::int64_t{*id} + *price + *quantity + *score + *count + static_cast<std::int64_t>(name->size()) +
                  static_cast<std::int64_t>(category->size()) + (*active ? 1 : 0);
  }
  m.stop(s);
  co_return std::string();
}

using scenario_fn = task<std::string> (*)(pg::connection&, sample&);

void report(const std::string& name, int threads, int per_sample, std::vector<sample>& got) {
  std::vector<double> rates;
  double user = 0, sys = 0;
  for (const sample& s : got) {
    rates.push_back(per_sample / s.wall_s);
    user += s.cpu_user_s;
    sys += s.cpu_sys_s;
  }
  const double total = static_cast<double>(per_sample) * static_cast<double>(got.size());
  const sample& mid = got[bench::median_index(rates)];
  bench::record rec("pg", name, threads);
  rec.num("samples", static_cast<long long>(got.size())).num("wall_s", mid.wall_s);
  if (name == "fetch_100k") {
    rec.num("queries", 1LL).num("rows", static_cast<long long>(per_sample)).num("rows_per_sec", bench::median(rates));
    rec.num("cpu_ns_per_row", (user + sys) * 1e9 / total);
  } else {
    rec.num("queries", static_cast<long long>(per_sample)).num("rows", static_cast<long long>(per_sample));
    rec.num("ops_per_sec", bench::median(rates));
    rec.num("cpu_us_per_query", (user + sys) * 1e6 / total);
  }
  rec.num("cpu_user_s", user).num("cpu_sys_s", sys);
  if (!mid.latencies_us.empty()) {
    std::vector<double> lat = mid.latencies_us;
    std::sort(lat.begin(), lat.end());
    rec.num("p50_us", bench::percentile_sorted(lat, 50)).num("p99_us", bench::percentile_sorted(lat, 99));
  }
  rec.num("checksum", static_cast<long long>(mid.checksum));
  rec.emit();
}

task<std::string> run_all(std::string url, bench::args a) {
  auto conn = co_await pg::connection::connect(url);
  if (!conn)
    co_return "connect: " + describe(conn.err());
  const std::pair<std::string, scenario_fn> table[] = {
      {"roundtrip", &roundtrip}, {"pipelined_10k", &pipelined}, {"fetch_100k", &fetch}};
  for (const auto& [name, fn] : table) {
    if (!a.wants(name))
      continue;
    std::vector<sample> got;
    std::int64_t reference = 0;
    for (int i = 0; i < a.warmup + a.samples; ++i) {
      sample s;
      if (auto bad = co_await fn(*conn, s); !bad.empty())
        co_return name + ": " + bad;
      if (i == 0)
        reference = s.checksum;
      else if (s.checksum != reference)
        co_return name + ": checksum " + std::to_string(s.checksum) + " differs from the first run's " +
                  std::to_string(reference);
      if (i >= a.warmup)
        got.push_back(std::move(s));
    }
    const int per_sample = name == "roundtrip"       ? roundtrip_queries
                           : name == "pipelined_10k" ? pipelined_queries
                                                     : fetch_rows;
    report(name, a.threads, per_sample, got);
  }
  co_await conn->close();
  co_return std::string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn-bench-pg: the pg driver suite (docs/workloads.md)"};
  bench::args a;
  std::string url;
  app.add_option("--url", url, "postgres://user:password@host:port/database")->required();
  bench::add_common_flags(app, a, scenarios);
  saturn::pool_options po{.threads = 0, .mode = saturn::pool_mode::io};
  app.add_option("--spin-us", po.spin_before_park_us,
                 "pool_options::spin_before_park_us (default: the pool's; a diagnosis, the suite never sets it)");
  CLI11_PARSE(app, argc, argv);
  po.threads = static_cast<unsigned>(a.threads);
  saturn::thread_pool pool(po);
  const std::string bad = pool.block_on(run_all(url, a));
  if (!bad.empty()) {
    std::fprintf(stderr, "saturn-bench-pg: %s\n", bad.c_str());
    return 1;
  }
  return 0;
}
