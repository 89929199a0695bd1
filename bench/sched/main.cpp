// saturn-bench-sched: the `sched` suite of docs/workloads.md (thread-pool scenario matrix)
// on saturn::thread_pool, in the harness shape the peers share.
//
// One pool for the whole run: --threads workers, pool_mode::cpu_bound by default (the
// tasks are CPU work and need no rings; --mode io gives every worker its ring, reported as
// a variant). External submitters are plain std::threads (the main thread when there is
// one) posting callables through their own thread_pool::submitter (--submit inject: through
// thread_pool::post, the global injection queue; a variant). Nested children are posted
// from inside the parent, on its worker.
//
// stdout: one JSON line per scenario; stderr: one line per sample (wall, voluntary and
// involuntary context switches of the process during the sample).
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "scenarios.hpp"

namespace {

double round_to(double v, int decimals) {
  const double f = std::pow(10.0, decimals);
  return std::round(v * f) / f;
}

double nearest_rank_us(const std::vector<std::int64_t>& sorted_ns, double p) {
  std::vector<double> us(sorted_ns.size());
  std::transform(sorted_ns.begin(), sorted_ns.end(), us.begin(), [](std::int64_t ns) { return double(ns) / 1e3; });
  return bench::percentile_sorted(us, p);
}

struct ctx_switches {
  long voluntary;
  long involuntary;
};
ctx_switches process_ctx_switches() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {ru.ru_nvcsw, ru.ru_nivcsw};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sched_bench;
  CLI::App app{"saturn sched benchmarks (docs/workloads.md, suite sched)"};
  bench::args a;
  std::vector<std::string> known;
  for (const auto& sc : scenarios())
    known.emplace_back(sc.name);
  bench::add_common_flags(app, a, known);
  std::string mode = "cpu_bound";
  std::string submit = "submitter";
  unsigned spin_us = saturn::pool_options{}.spin_before_park_us;
  app.add_option("--mode", mode, "pool mode: cpu_bound (default) or io (a ring per worker)")
      ->check(CLI::IsMember({"cpu_bound", "io"}));
  app.add_option("--submit", submit,
                 "external submission path: submitter (default; register_submitter per thread) or inject "
                 "(thread_pool::post, the global injection queue)")
      ->check(CLI::IsMember({"submitter", "inject"}));
  app.add_option("--spin-us", spin_us, "pool_options::spin_before_park_us (default: the pool's default)");
  unsigned backlog = saturn::pool_options{}.submit_backlog;
  app.add_option("--backlog", backlog,
                 "pool_options::submit_backlog (default: the pool's default; 0 = off)");
  CLI11_PARSE(app, argc, argv);

  // Non-default settings are named in a "variant" field.
  std::string variant;
  auto add_variant = [&](const std::string& v) { variant += (variant.empty() ? "" : ",") + v; };
  if (mode != "cpu_bound")
    add_variant("mode_" + mode);
  if (submit != "submitter")
    add_variant("submit_" + submit);
  if (spin_us != saturn::pool_options{}.spin_before_park_us)
    add_variant("spin_us_" + std::to_string(spin_us));
  if (backlog != saturn::pool_options{}.submit_backlog)
    add_variant("backlog_" + std::to_string(backlog));

  saturn::pool_options opts;
  opts.threads = static_cast<unsigned>(a.threads);
  opts.mode = mode == "io" ? saturn::pool_mode::io : saturn::pool_mode::cpu_bound;
  opts.spin_before_park_us = spin_us;
  opts.submit_backlog = backlog;
  saturn::thread_pool pool(opts);

  auto shared = std::make_unique<shared_state>();
  shared->lat.assign(1'000'000, 0);
  shared->pool = &pool;
  shared->path = submit == "inject" ? submit_path::inject : submit_path::submitter;

  for (const auto& sc : scenarios()) {
    if (!a.wants(sc.name))
      continue;
    for (int k = 0; k < a.warmup; ++k) {
      const sample smp = run_sample(shared.get(), sc);
      if (smp.checksum != sc.tasks)
        bench::fail(std::string(sc.name) + ": warmup checksum " + std::to_string(smp.checksum) + " != tasks " +
                    std::to_string(sc.tasks));
    }
    std::vector<sample> samples;
    std::vector<double> ops;
    std::vector<double> walls;
    for (int k = 0; k < a.samples; ++k) {
      const ctx_switches before = process_ctx_switches();
      samples.push_back(run_sample(shared.get(), sc));
      const ctx_switches after = process_ctx_switches();
      const sample& smp = samples.back();
      if (smp.checksum != sc.tasks)
        bench::fail(std::string(sc.name) + ": checksum " + std::to_string(smp.checksum) + " != tasks " +
                    std::to_string(sc.tasks));
      walls.push_back(smp.wall_s);
      ops.push_back(double(sc.tasks) / smp.wall_s);
      std::fprintf(stderr, "# saturn %s sample %d: wall %.6fs (ctx switches: %ld voluntary, %ld involuntary)\n",
                   sc.name, k, smp.wall_s, after.voluntary - before.voluntary,
                   after.involuntary - before.involuntary);
    }
    const std::size_t mid = bench::median_index(ops);
    std::vector<std::int64_t>& lat = samples[mid].lat;
    std::sort(lat.begin(), lat.end());
    bench::record rec("sched", sc.name, a.threads);
    if (!variant.empty())
      rec.str("variant", variant);
    rec.num("tasks", sc.tasks)
        .num("wall_s", round_to(bench::median(walls), 6))
        .num("ops_per_sec", round_to(bench::median(ops), 0))
        .num("p50_us", round_to(nearest_rank_us(lat, 50), 3))
        .num("p95_us", round_to(nearest_rank_us(lat, 95), 3))
        .num("p99_us", round_to(nearest_rank_us(lat, 99), 3))
        .num("checksum", static_cast<long long>(samples[mid].checksum))
        .emit();
  }
  return 0;
}
