// saturn-bench-loop: the `loop` suite of docs/workloads.md (the event-loop floor), run on
// one thread and one ring (SINGLE_ISSUER|DEFER_TASKRUN), against loop-liburing --setup defer.
#include "scenarios.hpp"

int main(int argc, char** argv) {
  CLI::App app{"saturn loop benchmarks (docs/workloads.md, suite loop)"};
  bench::args a;
  a.threads = 1;
  const std::vector<std::string> known = {"nop_batched_128", "nop_pingpong",          "await_pingpong",
                                          "timer_churn",     "timer_churn_kernel",    "read_4k_fixed_vs_plain",
                                          "effect_direct",   "effect_veneer",         "effect_io",
                                          "effect_io_callback"};
  bench::add_common_flags(app, a, known);
  CLI11_PARSE(app, argc, argv);
  if (a.threads != 1)
    std::fprintf(stderr, "saturn-bench-loop: single-threaded suite; --threads ignored\n");
  a.threads = 1;
  if (a.wants("nop_batched_128"))
    loop_bench::nop_batched_128(a);
  if (a.wants("nop_pingpong"))
    loop_bench::nop_pingpong(a);
  if (a.wants("await_pingpong"))
    loop_bench::await_pingpong(a);
  if (a.wants("timer_churn"))
    loop_bench::timer_churn(a);
  if (a.wants("timer_churn_kernel"))
    loop_bench::timer_churn_kernel(a);
  if (a.wants("read_4k_fixed_vs_plain"))
    loop_bench::read_4k_fixed_vs_plain(a);
  if (a.wants("effect_direct") || a.wants("effect_veneer"))
    loop_bench::effect_pure(a);
  if (a.wants("effect_io") || a.wants("effect_io_callback"))
    loop_bench::effect_io(a);
  return 0;
}
