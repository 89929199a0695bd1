// saturn-bench-spawn: the `spawn` suite of docs/workloads.md (lightweight task cost),
// everything run from inside the runtime (a driver task).
//
//   spawn_join_1m   spawn 1,000,000 tasks (task i returns i), join all in order, sum.
//   suspended_100k  100,000 tasks each wait on one shared event; RSS delta per task once
//                   all are suspended (every sample in a fresh child process, as the peers).
//   yield_pingpong  two tasks on one worker hand a turn flag back and forth 10,000,000
//                   times, yielding while it is not their turn.
#include "scenarios.hpp"

int main(int argc, char** argv) {
  CLI::App app{"saturn spawn benchmarks (docs/workloads.md, suite spawn)"};
  bench::args a;
  std::string child;
  bench::add_common_flags(app, a, {"spawn_join_1m", "suspended_100k", "yield_pingpong"});
  app.add_option("--child", child, "internal: run one sample of a scenario in this process");
  CLI11_PARSE(app, argc, argv);
  if (child == "suspended_100k")
    return spawn_bench::suspended_child(a);
  if (a.wants("spawn_join_1m"))
    spawn_bench::spawn_join_1m(a);
  if (a.wants("suspended_100k"))
    spawn_bench::suspended_100k(a, argv[0]);
  if (a.wants("yield_pingpong"))
    spawn_bench::yield_pingpong(a);
  return 0;
}
