// thread_pool: block_on: exceptions, the frame gone before it returns, misuse from a worker, options.
// Every parameterized test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless
// it needs an event loop. Oracles: per-item run counters and values computed independently.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_block_on);

// ---------------------------------------------------------------------------------------
// block_on

struct task_error : std::runtime_error {
  std::uint64_t id;
  explicit task_error(std::uint64_t i) : std::runtime_error("task failed: " + std::to_string(i)), id(i) {}
};

task<int> throws_after_yield(std::uint64_t id) {
  co_await saturn::yield();
  throw task_error(id);
}

task<void> throws_void() {
  co_await saturn::yield();
  throw std::logic_error("void task");
}

task<int> inline_chain(int depth) {
  if (depth == 0)
    co_return co_await throws_after_yield(77);
  co_return co_await inline_chain(depth - 1);
}

task<int> join_thrower(thread_pool* pool, std::uint64_t id) {
  auto h = pool->spawn(throws_after_yield(id));
  co_return co_await std::move(h);
}

task<int> nested_join_thrower(thread_pool* pool) {
  // a spawned task that itself joins a thrower: the exception crosses two joins
  co_return co_await pool->spawn(join_thrower(pool, 99));
}

TEST_P(pool_block_on, block_on_propagates_exceptions) {
  thread_pool pool(options_for(GetParam()));
  try {
    (void)pool.block_on(throws_after_yield(5));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 5u);
  }
  EXPECT_THROW(pool.block_on(throws_void()), std::logic_error);
  try {
    (void)pool.block_on(inline_chain(50));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 77u);
  }
  try {
    (void)pool.block_on(nested_join_thrower(&pool));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 99u);
  }
  try {
    (void)pool.block_on([]() -> task<int> {
      throw 17;  // not a std::exception
      co_return 0;
    }());
    ADD_FAILURE() << "no exception";
  } catch (int v) {
    EXPECT_EQ(v, 17);
  }
  // the pool still works afterwards
  EXPECT_EQ(pool.block_on([]() -> task<int> { co_return 3; }()), 3);
}

// block_on returns after the task has ended, and its frame with it: the task's by-value
// arguments are destroyed before block_on returns (as with runtime::block_on), so an
// argument may point at the caller's stack.
std::atomic<int> g_arg_destroyed{0};
struct slow_to_destroy {
  bool live = true;
  slow_to_destroy() = default;
  slow_to_destroy(slow_to_destroy&& o) noexcept : live(std::exchange(o.live, false)) {}
  ~slow_to_destroy() {
    if (live) {
      std::this_thread::sleep_for(2ms);  // widen the window in which block_on could return
      g_arg_destroyed.fetch_add(1);
    }
  }
};
task<int> with_argument(slow_to_destroy arg) {
  (void)arg;
  co_return 7;
}

TEST_P(pool_block_on, block_on_returns_after_the_task_frame_is_destroyed) {
  thread_pool pool(options_for(GetParam()));
  int early = 0;
  for (int i = 0; i < 50; ++i) {
    g_arg_destroyed.store(0);
    EXPECT_EQ(pool.block_on(with_argument(slow_to_destroy{})), 7);
    if (g_arg_destroyed.load() != 1)
      ++early;
    wait_until([] { return g_arg_destroyed.load() == 1; }, 1000ms);
  }
  EXPECT_EQ(early, 0) << "block_on returned before the task's arguments were destroyed, " << early << " of 50 times";
}

TEST(thread_pool_misuse, block_on_from_a_worker_dies_with_a_message) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        thread_pool pool(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
        pool.block_on([](thread_pool* p) -> task<int> {
          co_return p->block_on([]() -> task<int> { co_return 1; }());  // blocks a worker
        }(&pool));
      },
      "block_on");
}

TEST(thread_pool_options, zero_threads_means_the_affinity_mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  thread_pool pool(pool_options{.threads = 0, .mode = pool_mode::cpu_bound});
  EXPECT_EQ(pool.threads(), static_cast<unsigned>(CPU_COUNT(&set)));
}

TEST(thread_pool_options, too_many_workers_is_rejected) {
  EXPECT_THROW(thread_pool(pool_options{.threads = 256, .mode = pool_mode::cpu_bound}), std::invalid_argument);
}


}  // namespace
