// spawn_join_1m: a driver task spawns 1,000,000 tasks (task i returns i), keeps the join
// handles, awaits them in order and sums; checksum = 499,999,500,000.
#include "scenarios.hpp"

namespace spawn_bench {
namespace {
constexpr std::uint64_t k_tasks = 1'000'000;

saturn::task<std::uint64_t> value(std::uint64_t i) { co_return i; }

saturn::task<std::pair<double, std::uint64_t>> driver() {
  saturn::task_context& ctx = co_await saturn::this_task::context();
  saturn::task_context& root = ctx.sched->root_context();
  std::vector<saturn::join_handle<std::uint64_t>> handles;
  handles.reserve(k_tasks);
  const std::int64_t t0 = bench::now_ns();
  for (std::uint64_t i = 0; i < k_tasks; ++i)
    handles.push_back(saturn::spawn_in(root, value(i)));
  std::uint64_t sum = 0;
  for (auto& h : handles)
    sum += co_await std::move(h);
  const std::int64_t t1 = bench::now_ns();
  bench::do_not_optimize(sum);
  co_return std::pair{double(t1 - t0) / 1e9, sum};
}
}  // namespace

void spawn_join_1m(const bench::args& a) {
  const int threads = a.threads;
  saturn::thread_pool rt(saturn::pool_options{.threads = static_cast<unsigned>(threads)});
  std::uint64_t sum = 0;
  auto walls = bench::run_samples<double>(a, [&]() -> double {
    auto [wall, s] = rt.block_on(driver());
    sum = s;
    return wall;
  });
  const std::uint64_t expect = (k_tasks - 1) * k_tasks / 2;
  if (sum != expect)
    bench::fail("spawn_join_1m checksum " + std::to_string(sum) + " != " + std::to_string(expect));
  const double w = bench::median(walls);
  bench::record("spawn", "spawn_join_1m", threads)
      .num("tasks", k_tasks)
      .num("wall_s", w)
      .num("ns_per_task", w * 1e9 / double(k_tasks))
      .num("peak_rss_kib", bench::peak_rss_kib())
      .num("checksum", sum)
      .emit();
}

}  // namespace spawn_bench
