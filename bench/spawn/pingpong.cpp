// yield_pingpong: two tasks on one worker pass a turn flag; a task whose turn it is not
// yields. 10,000,000 hand-offs; ns_per_switch = wall / hand-offs.
#include <atomic>

#include "scenarios.hpp"

namespace spawn_bench {
namespace {
constexpr std::uint64_t k_switches = 10'000'000;

saturn::task<std::uint64_t> player(std::atomic<std::uint8_t>& turn, std::uint8_t me, std::uint64_t rounds) {
  std::uint64_t handoffs = 0;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    while (turn.load(std::memory_order_acquire) != me)
      co_await saturn::yield();
    turn.store(static_cast<std::uint8_t>(1 - me), std::memory_order_release);
    ++handoffs;
  }
  co_return handoffs;
}

saturn::task<std::pair<double, std::uint64_t>> driver() {
  saturn::task_context& ctx = co_await saturn::this_task::context();
  std::atomic<std::uint8_t> turn{0};
  const std::int64_t t0 = bench::now_ns();
  auto a = saturn::spawn_in(ctx.sched->root_context(), player(turn, 0, k_switches / 2));
  auto b = saturn::spawn_in(ctx.sched->root_context(), player(turn, 1, k_switches - k_switches / 2));
  std::uint64_t n = co_await std::move(a);
  n += co_await std::move(b);
  const std::int64_t t1 = bench::now_ns();
  bench::do_not_optimize(n);
  co_return std::pair{double(t1 - t0) / 1e9, n};
}
}  // namespace

void yield_pingpong(const bench::args& a) {
  saturn::runtime rt;  // one worker, as the contract says
  std::uint64_t n = 0;
  auto walls = bench::run_samples<double>(a, [&]() -> double {
    auto [wall, handoffs] = rt.block_on(driver());
    n = handoffs;
    return wall;
  });
  if (n != k_switches)
    bench::fail("yield_pingpong: " + std::to_string(n) + " hand-offs != " + std::to_string(k_switches));
  const double w = bench::median(walls);
  bench::record("spawn", "yield_pingpong", 1)
      .num("switches", k_switches)
      .num("wall_s", w)
      .num("ns_per_switch", w * 1e9 / double(k_switches))
      .num("checksum", n)
      .emit();
}

}  // namespace spawn_bench
