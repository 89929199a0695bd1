// Tier C against hand-written code (issue "composable, zero-cost pipelines").
//
// effect_direct / effect_veneer: a three-node pure map chain, h(g(f(x))), written directly
// and as `evaluate(just(x) | then(f) | then(g) | then(h))`, 10^6 evaluations per sample.
// Both sides pass the input and the output through do_not_optimize, so neither can be
// folded away or hoisted; ns_per_eval is the cost of one evaluation.
//
// effect_io / effect_io_callback: 10^6 NOPs one after another (each completion starts
// the next), as the effect `nop() | then(+1)` started with start(e, loop, fn), and as
// the same written with tier A's loop.nop(fn). ns_per_op.
//
// The two sides of each pair run alternately in one process (direct, veneer, veneer,
// direct, …), so a burst of load hits both.
#include <saturn/effect/effect.hpp>
#include <saturn/loop/event_loop.hpp>

#include "scenarios.hpp"

namespace loop_bench {
namespace {
namespace fx = saturn::effect;

constexpr int k_evals = 1'000'000;
constexpr int k_io_ops = 1'000'000;

struct f1 {
  std::uint64_t operator()(std::uint64_t x) const noexcept { return x * 3 + 1; }
};
struct f2 {
  std::uint64_t operator()(std::uint64_t x) const noexcept { return x ^ (x >> 7); }
};
struct f3 {
  std::uint64_t operator()(std::uint64_t x) const noexcept { return x + (x << 2); }
};

double run_direct(std::uint64_t& checksum) {
  std::uint64_t sum = 0;
  const std::int64_t t0 = bench::now_ns();
  for (int i = 0; i < k_evals; ++i) {
    std::uint64_t x = static_cast<std::uint64_t>(i);
    bench::do_not_optimize(x);
    std::uint64_t y = f3{}(f2{}(f1{}(x)));
    bench::do_not_optimize(y);
    sum += y;
  }
  const std::int64_t t1 = bench::now_ns();
  checksum = sum;
  return double(t1 - t0) / k_evals;
}

double run_veneer(std::uint64_t& checksum) {
  std::uint64_t sum = 0;
  const std::int64_t t0 = bench::now_ns();
  for (int i = 0; i < k_evals; ++i) {
    std::uint64_t x = static_cast<std::uint64_t>(i);
    bench::do_not_optimize(x);
    std::uint64_t y = *fx::evaluate(fx::just(x) | fx::then(f1{}) | fx::then(f2{}) | fx::then(f3{}));
    bench::do_not_optimize(y);
    sum += y;
  }
  const std::int64_t t1 = bench::now_ns();
  checksum = sum;
  return double(t1 - t0) / k_evals;
}

std::uint64_t expected_pure() {
  std::uint64_t sum = 0;
  for (int i = 0; i < k_evals; ++i)
    sum += f3{}(f2{}(f1{}(static_cast<std::uint64_t>(i))));
  return sum;
}

void emit_pure(const char* name, const std::vector<double>& ns, std::uint64_t checksum) {
  const double m = bench::median(ns);
  bench::record("loop", name, 1)
      .num("evals", k_evals)
      .num("wall_s", m * k_evals / 1e9)
      .num("ns_per_eval", m)
      .num("checksum", checksum)
      .emit();
}

// ---- effect_io

struct callback_chain {
  saturn::event_loop* loop;
  int left;
  std::uint64_t seen = 0;
  void next() {
    loop->nop([this](int res) {
      if (res < 0) [[unlikely]]
        bench::fail("nop completed with " + std::to_string(res));
      seen += 1;
      if (--left > 0)
        next();
    });
  }
};

struct effect_chain {
  saturn::event_loop* loop;
  int left;
  std::uint64_t seen = 0;
  void next() {
    fx::start(fx::nop() | fx::then([]() noexcept { return std::uint64_t{1}; }), *loop,
              [this](fx::outcome<std::uint64_t> o) {
                if (!o) [[unlikely]]
                  bench::fail("nop effect failed: " + o.error().message());
                seen += *o;
                if (--left > 0)
                  next();
              });
  }
};

template <class Chain>
double run_io(saturn::event_loop& loop, std::uint64_t& checksum) {
  Chain c{&loop, k_io_ops};
  const std::int64_t t0 = bench::now_ns();
  c.next();
  loop.run();
  const std::int64_t t1 = bench::now_ns();
  bench::do_not_optimize(c.seen);
  checksum = c.seen;
  return double(t1 - t0) / k_io_ops;
}

void emit_io(const char* name, const saturn::event_loop& loop, const std::vector<double>& ns, std::uint64_t checksum) {
  const double m = bench::median(ns);
  bench::record("loop", name, 1)
      .str("setup", loop.defer_taskrun() ? "defer" : "other")
      .num("ops", k_io_ops)
      .num("wall_s", m * k_io_ops / 1e9)
      .num("ops_per_sec", 1e9 / m)
      .num("ns_per_op", m)
      .num("checksum", checksum)
      .emit();
}

/// Runs `a_fn` and `b_fn` alternately (ABBA…), warm-ups first; returns their samples.
template <class A, class B>
void interleave(const bench::args& args, bool want_a, bool want_b, A a_fn, B b_fn, std::vector<double>& a,
                std::vector<double>& b) {
  for (int i = 0; i < args.warmup + args.samples; ++i) {
    const bool measured = i >= args.warmup;
    const bool a_first = i % 2 == 0;
    for (int side = 0; side < 2; ++side) {
      const bool run_a = (side == 0) == a_first;
      if (run_a && want_a) {
        double v = a_fn();
        if (measured)
          a.push_back(v);
      } else if (!run_a && want_b) {
        double v = b_fn();
        if (measured)
          b.push_back(v);
      }
    }
  }
}
}  // namespace

void effect_pure(const bench::args& a) {
  const bool want_direct = a.wants("effect_direct"), want_veneer = a.wants("effect_veneer");
  const std::uint64_t expected = expected_pure();
  std::uint64_t sum_d = expected, sum_v = expected;
  std::vector<double> direct, veneer;
  interleave(
      a, want_direct, want_veneer, [&] { return run_direct(sum_d); }, [&] { return run_veneer(sum_v); }, direct,
      veneer);
  if (sum_d != expected || sum_v != expected)
    bench::fail("effect_direct/effect_veneer checksum mismatch: " + std::to_string(sum_d) + " / " +
                std::to_string(sum_v) + ", expected " + std::to_string(expected));
  if (want_direct)
    emit_pure("effect_direct", direct, sum_d);
  if (want_veneer)
    emit_pure("effect_veneer", veneer, sum_v);
}

void effect_io(const bench::args& a) {
  const bool want_fx = a.wants("effect_io"), want_cb = a.wants("effect_io_callback");
  saturn::event_loop loop(saturn::loop_options{.entries = 8});
  std::uint64_t sum_fx = k_io_ops, sum_cb = k_io_ops;
  std::vector<double> fx_ns, cb_ns;
  interleave(
      a, want_fx, want_cb, [&] { return run_io<effect_chain>(loop, sum_fx); },
      [&] { return run_io<callback_chain>(loop, sum_cb); }, fx_ns, cb_ns);
  if (sum_fx != k_io_ops || sum_cb != k_io_ops)
    bench::fail("effect_io checksum " + std::to_string(sum_fx) + " / callback " + std::to_string(sum_cb));
  if (want_fx)
    emit_io("effect_io", loop, fx_ns, sum_fx);
  if (want_cb)
    emit_io("effect_io_callback", loop, cb_ns, sum_cb);
}

}  // namespace loop_bench
