// Joining a task spawned on another scheduler: the joiner continues on its own scheduler
// (join_handle.hpp), not inline on the thread where the other task finished. Before, a
// task of an io pool that awaited a cpu_bound pool's task went on on that pool's thread,
// without an event loop, and its next sleep crashed (found by the simulator's pool
// scenario). Oracles: the scheduler, loop and thread seen after each join, and the values.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

task<std::uint64_t> square(std::uint64_t v) { co_return v * v; }

task<std::uint64_t> fails(std::uint64_t v) {
  if (v != 0)
    throw std::runtime_error("joined task failed");
  co_return 0;
}

/// On `home` (an io pool), joins `n` tasks spawned on `other`; after each join, checks it
/// is still on `home` with a loop by sleeping. Returns the sum and counts the misplaced.
task<std::uint64_t> join_from_io_pool(thread_pool* home, thread_pool* other, unsigned n, unsigned* away) {
  std::uint64_t sum = 0;
  for (unsigned i = 0; i < n; ++i) {
    auto h = i % 3 == 0 ? other->spawn_on(i % other->threads(), square(i)) : other->spawn(square(i));
    sum += co_await std::move(h);
    if (saturn::scheduler::current() != home || saturn::event_loop::current() == nullptr) {
      ++*away;
      co_return sum;  // no sleep without a loop: that was the crash
    }
    if (i % 16 == 0)
      co_await saturn::sleep_for(10us);
  }
  co_return sum;
}

TEST(cross_scheduler_join, an_io_pool_task_joining_cpu_bound_work_stays_on_its_pool) {
  thread_pool io(pool_options{.threads = 2, .mode = pool_mode::io});
  thread_pool cpu(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
  constexpr unsigned n = 2'000;
  unsigned away = 0;
  const std::uint64_t sum = io.block_on(join_from_io_pool(&io, &cpu, n, &away));
  EXPECT_EQ(away, 0u) << "a join continued on the other pool";
  std::uint64_t want = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    want += i * i;
  EXPECT_EQ(sum, want);
}

TEST(cross_scheduler_join, two_io_pools_keep_their_tasks) {
  thread_pool a(pool_options{.threads = 2, .mode = pool_mode::io});
  thread_pool b(pool_options{.threads = 1, .mode = pool_mode::io});
  unsigned away = 0;
  (void)a.block_on(join_from_io_pool(&a, &b, 500, &away));
  EXPECT_EQ(away, 0u);
}

task<std::thread::id> join_from_runtime(thread_pool* pool, std::uint64_t* sum) {
  for (std::uint64_t i = 0; i < 200; ++i)
    *sum += co_await pool->spawn(square(i));
  co_return std::this_thread::get_id();
}

TEST(cross_scheduler_join, a_runtime_task_joining_pool_work_stays_on_the_runtime_thread) {
  thread_pool pool(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
  saturn::runtime rt;
  std::uint64_t sum = 0;
  EXPECT_EQ(rt.block_on(join_from_runtime(&pool, &sum)), std::this_thread::get_id());
  EXPECT_EQ(sum, 199u * 200u * 399u / 6u);
}

task<std::uint64_t> join_one(thread_pool* other, std::uint64_t v) { co_return co_await other->spawn(square(v)); }

// The other pool's worker hands the joiner back (a push, then a wake-up) and may still
// be inside that wake-up when the runtime, its work done, is destroyed: ~event_loop waits
// for it (ThreadSanitizer saw the eventfd closed under the worker's write).
TEST(cross_scheduler_join, a_runtime_destroyed_right_after_its_last_task_came_back) {
  thread_pool pool(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
  for (std::uint64_t i = 0; i < 300; ++i) {
    saturn::runtime rt;
    ASSERT_EQ(rt.block_on(join_one(&pool, i)), i * i);
  }
}

// The same between two pools: ~thread_pool waits for the other pool's worker to leave
// notify_one.
TEST(cross_scheduler_join, a_pool_destroyed_right_after_its_last_task_came_back) {
  thread_pool other(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
  for (std::uint64_t i = 0; i < 100; ++i) {
    thread_pool home(pool_options{.threads = 1, .mode = pool_mode::cpu_bound});
    ASSERT_EQ(home.block_on(join_one(&other, i)), i * i);
  }
}

task<int> join_failure(thread_pool* other) {
  try {
    (void)co_await other->spawn(fails(1));
  } catch (const std::runtime_error& e) {
    co_return std::string(e.what()) == "joined task failed" ? 1 : 2;
  }
  co_return 0;
}

TEST(cross_scheduler_join, a_failure_crosses_back_with_the_joiner) {
  thread_pool io(pool_options{.threads = 1, .mode = pool_mode::io});
  thread_pool cpu(pool_options{.threads = 1, .mode = pool_mode::cpu_bound});
  EXPECT_EQ(io.block_on(join_failure(&cpu)), 1);
}

}  // namespace
