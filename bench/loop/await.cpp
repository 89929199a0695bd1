// await_pingpong: a coroutine awaits one NOP at a time (1,000,000); the raw floor to
// compare with is nop_pingpong. The operation lives in the coroutine frame and the task
// is resumed through the loop's run queue.
#include <saturn/saturn.hpp>

#include "scenarios.hpp"

namespace loop_bench {
namespace {
constexpr int k_ops = 1'000'000;

saturn::task<std::uint64_t> awaiter_loop() {
  std::uint64_t seen = 0;
  for (int i = 0; i < k_ops; ++i) {
    auto r = co_await saturn::nop();
    if (!r) [[unlikely]]
      bench::fail("nop await failed: " + r.err().message());
    ++seen;
  }
  co_return seen;
}
}  // namespace

void await_pingpong(const bench::args& a) {
  saturn::runtime rt(saturn::runtime_options{.loop = {.entries = 8}});
  std::uint64_t checksum = 0;
  auto walls = bench::run_samples<double>(a, [&]() -> double {
    const std::int64_t t0 = bench::now_ns();
    std::uint64_t seen = rt.block_on(awaiter_loop());
    const std::int64_t t1 = bench::now_ns();
    bench::do_not_optimize(seen);
    checksum = seen;
    return double(t1 - t0) / 1e9;
  });
  if (checksum != k_ops)
    bench::fail("await_pingpong checksum " + std::to_string(checksum));
  const double w = bench::median(walls);
  bench::record("loop", "await_pingpong", 1)
      .str("setup", rt.loop().defer_taskrun() ? "defer" : "other")
      .num("ops", k_ops)
      .num("wall_s", w)
      .num("ops_per_sec", k_ops / w)
      .num("ns_per_op", w * 1e9 / k_ops)
      .num("checksum", checksum)
      .emit();
}

}  // namespace loop_bench
