// timer_churn: 1,000,000 timers of 0–1 ms (the floor's xorshift and seed), armed 128 per
// loop iteration, until all have fired. saturn keeps timers in the loop (a 4-ary heap,
// one kernel wait for the nearest deadline); timer_churn_kernel does the same with one
// IORING_OP_TIMEOUT per timer through the same loop, to show what the heap saves.
#include <saturn/loop/event_loop.hpp>

#include "scenarios.hpp"

namespace loop_bench {
namespace {
constexpr int k_batch = 128;
constexpr std::uint64_t k_max_ns = 1'000'000;

struct xorshift {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() {
    std::uint64_t x = state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return state = x;
  }
};

template <class Arm>
double churn(saturn::event_loop& loop, int timers, std::uint64_t& fired, Arm&& arm) {
  xorshift rng;
  fired = 0;
  const std::int64_t t0 = bench::now_ns();
  int armed = 0;
  while (armed < timers) {
    const int batch = std::min(k_batch, timers - armed);
    for (int j = 0; j < batch; ++j)
      arm(std::chrono::nanoseconds(rng.next() % (k_max_ns + 1)));
    armed += batch;
    loop.run_once(false);  // fire what is due (and, for kernel timeouts, one enter)
  }
  loop.run();
  const std::int64_t t1 = bench::now_ns();
  bench::do_not_optimize(fired);
  return double(t1 - t0) / 1e9;
}

void report(const char* scenario, const bench::args& a, saturn::event_loop& loop, int timers,
            std::vector<double> walls, std::uint64_t fired, std::uint64_t early) {
  if (fired != static_cast<std::uint64_t>(timers))
    bench::fail(std::string(scenario) + " checksum " + std::to_string(fired));
  if (early != 0)
    bench::fail(std::string(scenario) + ": " + std::to_string(early) + " timers fired before their deadline");
  (void)a;
  const double w = bench::median(std::move(walls));
  bench::record("loop", scenario, 1)
      .str("setup", loop.defer_taskrun() ? "defer" : "other")
      .num("timers", timers)
      .num("wall_s", w)
      .num("ns_per_timer", w * 1e9 / timers)
      .num("checksum", fired)
      .emit();
}
}  // namespace

void timer_churn(const bench::args& a) {
  constexpr int k_timers = 1'000'000;
  saturn::event_loop loop(saturn::loop_options{.entries = k_batch});
  std::uint64_t fired = 0;
  std::uint64_t early = 0;
  auto walls = bench::run_samples<double>(a, [&]() -> double {
    return churn(loop, k_timers, fired, [&](std::chrono::nanoseconds d) {
      const saturn::clock::time_point deadline = saturn::clock::now() + d;
      loop.after(d, [&fired, &early, deadline] {
        // The contract a timer keeps: never before its deadline.
        if (saturn::clock::now() < deadline) [[unlikely]]
          ++early;
        ++fired;
      });
    });
  });
  report("timer_churn", a, loop, k_timers, std::move(walls), fired, early);
}

void timer_churn_kernel(const bench::args& a) {
  // 200,000 rather than 1,000,000: one kernel hrtimer per timer costs ~5 µs here.
  constexpr int k_timers = 200'000;
  saturn::event_loop loop(saturn::loop_options{.entries = k_batch, .cq_entries = 65536});
  std::uint64_t fired = 0;
  std::uint64_t bad = 0;
  auto walls = bench::run_samples<double>(a, [&]() -> double {
    return churn(loop, k_timers, fired, [&](std::chrono::nanoseconds d) {
      loop.timeout(d, [&fired, &bad](int res) {
        if (res != 0) [[unlikely]]
          ++bad;
        ++fired;
      });
    });
  });
  report("timer_churn_kernel", a, loop, k_timers, std::move(walls), fired, bad);
}

}  // namespace loop_bench
