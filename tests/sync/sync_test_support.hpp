// Helpers shared by the sync tests: settling the single-threaded runtime, racing a
// cancellation against a wake-up on plain OS threads, and sizes scaled for sanitizers.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/saturn.hpp>
#include <saturn/sync.hpp>

#include <atomic>
#include <optional>
#include <stop_token>
#include <thread>

namespace sync_test {

/// Iteration counts: sanitizer builds run fewer rounds of the threaded races.
#if defined(SATURN_TSAN) || defined(SATURN_ASAN)
inline constexpr int race_rounds = 150;
#else
inline constexpr int race_rounds = 1000;
#endif

/// Lets every task that is ready run until it suspends (the runtime is single-threaded,
/// so after a few trips to the back of the queue every spawned task is parked).
inline saturn::task<> settle(int rounds = 4) {
  for (int i = 0; i < rounds; ++i)
    co_await saturn::yield();
}

/// True when `r` failed with `c`.
template <class R>
bool failed_with(const R& r, std::errc c) {
  return !r.has_value() && r.err() == c;
}

/// A stop source plus a copy of the runtime's root context that carries its token, so a
/// test can spawn a task under a token it controls.
struct stoppable {
  std::stop_source source;
  saturn::task_context ctx;
  explicit stoppable(saturn::scheduler& s) : ctx(s.root_context()) { ctx.token = source.get_token(); }
};

/// Spins until `flag` is set (used to release racing threads at the same moment).
inline void spin_until(const std::atomic<bool>& flag) {
  while (!flag.load(std::memory_order_acquire))
    std::this_thread::yield();
}

/// Busy-waits `n` short steps (jitter that shifts two racing threads against each other).
inline void jitter(unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    saturn::detail::cpu_relax();
}

/// One round of "cancel races a wake-up": spawns `waiter` under a fresh stop source, lets
/// it park, then two plain threads call `signal()` and request_stop() at the same moment.
/// Returns once the waiter finished and both threads were joined.
template <class Waiter, class Signal>
void race_cancel_once(saturn::runtime& rt, Waiter&& waiter, Signal&& signal, int round) {
  stoppable stop(rt);
  std::atomic<bool> go{false};
  std::optional<std::thread> a, b;
  rt.block_on([&]() -> saturn::task<> {
    auto h = saturn::spawn_in(stop.ctx, waiter());
    co_await settle();
    // Alternate which thread starts first and shift them by a varying jitter, so both
    // orders and true overlaps all get their chance.
    const unsigned ja = static_cast<unsigned>(round * 7) % 64, jb = static_cast<unsigned>(round * 13) % 64;
    auto run_a = [&, ja] {
      spin_until(go);
      jitter(ja);
      signal();
    };
    auto run_b = [&, jb] {
      spin_until(go);
      jitter(jb);
      stop.source.request_stop();
    };
    if (round % 2 == 0) {
      a.emplace(run_a);
      b.emplace(run_b);
    } else {
      b.emplace(run_b);
      a.emplace(run_a);
    }
    go.store(true, std::memory_order_release);
    co_await std::move(h);
  }());
  a->join();
  b->join();
}

}  // namespace sync_test
