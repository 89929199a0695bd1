// spawn-tbb: the `spawn` suite (docs/workloads.md) on oneTBB; spawn_join_1m only.
//
//   spawn-tbb [--threads N] [--samples N] [--warmup N] [--scenario spawn_join_1m]
//
// "Inside the runtime": main enters a task_arena of N slots (main takes one, N-1 TBB
// workers the rest) and, from there, runs 1,000,000 tasks with task_group::run. TBB
// tasks have no return value, so task i stores i into slot i of a preallocated vector
// (its join value); task_group::wait joins them all and the slots are summed.
//
// suspended_100k and yield_pingpong have no oneTBB counterpart: a TBB task runs to
// completion. The one way to park one, tbb::task::suspend, switches the worker onto
// another full coroutine stack per suspended task (meant for a few waits on outside
// events, not 100,000 parked tasks), and there is no yield-and-continue at all. Asked
// for them, spawn-tbb says so and exits with status 2.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "peer_bench.hpp"

namespace {

constexpr const char* kUsage = "spawn-tbb [--threads N] [--samples N] [--warmup N] [--scenario spawn_join_1m]";
constexpr long kTasks = 1'000'000;

struct sample {
  double wall_s;
  long long sum;
};

sample spawn_join(tbb::task_arena& arena) {
  sample out{};
  arena.execute([&] {
    const std::int64_t t0 = peer::now_ns();
    std::vector<long long> joined(kTasks);
    long long* slot = joined.data();
    tbb::task_group group;
    for (long i = 0; i < kTasks; ++i) group.run([slot, i] { slot[i] = i; });
    group.wait();
    long long sum = 0;
    for (long long v : joined) sum += v;
    out = {double(peer::now_ns() - t0) / 1e9, sum};
  });
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage);
  for (const auto& s : o.scenarios) {
    if (s == "suspended_100k" || s == "yield_pingpong") {
      std::fprintf(stderr, "spawn-tbb: %s has no oneTBB counterpart (tasks run to completion)\n", s.c_str());
      return 2;
    }
  }
  peer::check_scenarios(o, kUsage, {"spawn_join_1m"});
  if (!o.positional.empty()) peer::usage_error(kUsage, "unexpected argument " + o.positional[0]);

  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, std::size_t(o.threads));
  tbb::task_arena arena(o.threads, /*reserved_for_masters=*/1);
  const long long expect = (long long)kTasks * (kTasks - 1) / 2;

  std::vector<double> walls;
  long long sum = 0;
  for (int k = 0; k < o.warmup + o.samples; ++k) {
    sample s = spawn_join(arena);
    if (s.sum != expect) {
      std::fprintf(stderr, "spawn-tbb: spawn_join_1m joined sum %lld, expected %lld\n", s.sum, expect);
      return 1;
    }
    sum = s.sum;
    if (k >= o.warmup) walls.push_back(s.wall_s);
  }
  const double wall = peer::median(walls);
  peer::json_line()
      .add("suite", "spawn")
      .add("scenario", "spawn_join_1m")
      .add("runtime", "tbb")
      .add("threads", o.threads)
      .add("tasks", kTasks)
      .add("wall_s", wall, 6)
      .add("ns_per_task", wall * 1e9 / kTasks, 1)
      .add("peak_rss_kib", peer::peak_rss_kib())
      .add("checksum", sum)
      .print();
  return 0;
}
