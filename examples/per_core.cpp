// Placement on the thread_pool: one task per worker, each with its own data.
//
//   spawn_on(i, t)  starts t on worker i (0 .. threads() - 1); no other worker steals it
//                   before it first suspends, and in io mode a wake-up by that worker's
//                   ring (its I/O, its timers) keeps it there
//   worker_index()  which worker the calling task runs on (nothing off the pool)
//
// Each worker's task counts into its own slot (no sharing, no atomics), sleeping between
// rounds: a loop timer wakes it on the same worker, so every round checks the index again.
// Exits 0 when every task stayed on its worker and the counts add up.
#include <saturn/saturn.hpp>

#include <cstdio>
#include <stdexcept>
#include <vector>

using namespace std::chrono_literals;

namespace {

/// Per-core data: one slot per worker, written only by the task placed on that worker.
struct alignas(64) slot {
  long count = 0;
  bool moved = false;
};

saturn::task<void> count_on(saturn::thread_pool* pool, unsigned me, slot* mine, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    if (pool->worker_index() != me)
      mine->moved = true;
    mine->count += r;
    (void)co_await saturn::sleep_for(100us);
  }
}

}  // namespace

int main() {
  saturn::thread_pool pool({.threads = 2});
  std::vector<slot> slots(pool.threads());
  constexpr int rounds = 200;
  std::vector<saturn::join_handle<void>> handles;
  for (unsigned i = 0; i < pool.threads(); ++i)
    handles.push_back(pool.spawn_on(i, count_on(&pool, i, &slots[i], rounds)));
  pool.block_on([](std::vector<saturn::join_handle<void>>* hs) -> saturn::task<void> {
    for (auto& h : *hs)
      co_await std::move(h);
  }(&handles));
  bool ok = true;
  for (unsigned i = 0; i < pool.threads(); ++i) {
    std::printf("worker %u: count %ld%s\n", i, slots[i].count, slots[i].moved ? " (moved!)" : "");
    ok = ok && !slots[i].moved && slots[i].count == long(rounds) * (rounds - 1) / 2;
  }
  try {
    (void)pool.spawn_on(pool.threads(), count_on(&pool, 0, &slots[0], 1));
    ok = false;  // a worker that does not exist must be refused
  } catch (const std::out_of_range& e) {
    std::printf("refused: %s\n", e.what());
  }
  return ok ? 0 : 1;
}
