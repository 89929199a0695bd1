// nop_batched_128 and nop_pingpong through the callback tier (tier A), the loop's public
// face: each NOP is a pool-allocated callback operation whose completion is one indirect
// call from the reaper.
#include <saturn/config.hpp>
#include <saturn/loop/event_loop.hpp>

#include "scenarios.hpp"

namespace loop_bench {
namespace {
constexpr int k_batch = 128;
constexpr int k_rounds = 100'000;
constexpr int k_pingpong_ops = 1'000'000;
}  // namespace

void nop_batched_128(const bench::args& a) {
  saturn::event_loop loop(saturn::loop_options{.entries = k_batch, .cq_entries = 2 * k_batch});
  std::uint64_t checksum = 0;
  auto body = [&]() -> double {
    std::uint64_t seen = 0;
    const std::int64_t t0 = bench::now_ns();
    for (int r = 0; r < k_rounds; ++r) {
      for (int j = 0; j < k_batch; ++j)
        loop.nop([&seen](int res) {
          if (res != 0) [[unlikely]]
            bench::fail("nop completed with " + std::to_string(res));
          ++seen;
        });
      // One iteration = one io_uring_enter (submit 128, wait) + one reap of all 128.
      while (loop.in_flight() != 0)
        loop.run_once(true);
    }
    const std::int64_t t1 = bench::now_ns();
    bench::do_not_optimize(seen);
    checksum = seen;
    return double(t1 - t0) / 1e9;
  };
  auto walls = bench::run_samples<double>(a, body);
  const double ops = double(k_batch) * k_rounds;
  if (checksum != static_cast<std::uint64_t>(ops))
    bench::fail("nop_batched_128 checksum " + std::to_string(checksum));
  const double w = bench::median(walls);
  bench::record rec("loop", "nop_batched_128", 1);
  rec.str("setup", loop.defer_taskrun() ? "defer" : "other")
      .num("ops", ops)
      .num("wall_s", w)
      .num("ops_per_sec", ops / w)
      .num("ns_per_op", w * 1e9 / ops);
  if constexpr (saturn::config::metrics)  // the enter count is a metric: absent when compiled out
    rec.num("enters_per_round", double(loop.stats().enters) / double(k_rounds * (a.warmup + a.samples)));
  rec.num("checksum", checksum).emit();
}

namespace {
struct pingpong {
  saturn::event_loop* loop;
  int left;
  std::uint64_t seen = 0;
  void next() {
    loop->nop([this](int res) {
      if (res != 0) [[unlikely]]
        bench::fail("nop completed with " + std::to_string(res));
      ++seen;
      if (--left > 0)
        next();
    });
  }
};
}  // namespace

void nop_pingpong(const bench::args& a) {
  saturn::event_loop loop(saturn::loop_options{.entries = 8});
  std::uint64_t checksum = 0;
  auto body = [&]() -> double {
    pingpong p{&loop, k_pingpong_ops};
    const std::int64_t t0 = bench::now_ns();
    p.next();
    loop.run();
    const std::int64_t t1 = bench::now_ns();
    bench::do_not_optimize(p.seen);
    checksum = p.seen;
    return double(t1 - t0) / 1e9;
  };
  auto walls = bench::run_samples<double>(a, body);
  if (checksum != k_pingpong_ops)
    bench::fail("nop_pingpong checksum " + std::to_string(checksum));
  const double w = bench::median(walls);
  bench::record("loop", "nop_pingpong", 1)
      .str("setup", loop.defer_taskrun() ? "defer" : "other")
      .num("ops", k_pingpong_ops)
      .num("wall_s", w)
      .num("ops_per_sec", k_pingpong_ops / w)
      .num("ns_per_op", w * 1e9 / k_pingpong_ops)
      .num("checksum", checksum)
      .emit();
}

}  // namespace loop_bench
