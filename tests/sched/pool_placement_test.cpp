// thread_pool::spawn_on: a placed task starts on its worker (from outside and from any
// worker), waits for that worker rather than being stolen, wakes it when it sleeps, stays
// there across its own ring's wake-ups (io mode), and is destroyed once, never started,
// when the pool goes first. A bad index throws and destroys the task. worker_index names
// the worker a task runs on.
// Every parameterized test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless
// it needs an event loop. Oracle: the OS thread id each task reports.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_placement);

task<int> where() { co_return os_tid(); }

template <class T>
task<T> await_handle(join_handle<T> h) {
  co_return co_await std::move(h);
}

/// Waits from outside the pool for a spawned task's value.
template <class T>
T join(thread_pool& pool, join_handle<T>& h) {
  return pool.block_on(await_handle(std::move(h)));
}

/// The OS thread of each worker, found by placing a task on it.
std::vector<int> worker_tids(thread_pool& pool) {
  std::vector<int> tids;
  for (unsigned i = 0; i < pool.threads(); ++i)
    tids.push_back(pool.block_on([](thread_pool* p, unsigned w) -> task<int> {
      co_return co_await p->spawn_on(w, where());
    }(&pool, i)));
  return tids;
}

TEST_P(pool_placement, each_task_starts_on_the_worker_it_was_placed_on) {
  thread_pool pool(options_for(GetParam()));
  const std::vector<int> tids = worker_tids(pool);
  ASSERT_EQ(std::set<int>(tids.begin(), tids.end()).size(), pool.threads()) << "two workers share an OS thread";
  // From outside the pool.
  constexpr int rounds = 200 / k_slow;
  std::vector<join_handle<int>> hs;
  for (int r = 0; r < rounds; ++r)
    for (unsigned i = 0; i < pool.threads(); ++i)
      hs.push_back(pool.spawn_on(i, where()));
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < hs.size(); ++k)
    if (join(pool, hs[k]) != tids[k % pool.threads()])
      ++wrong;
  EXPECT_EQ(wrong, 0u) << "tasks placed from outside started on another worker";
  // From tasks on the workers, each placing on every worker (itself included).
  auto from_inside = [](thread_pool* p, std::vector<int> expect, int n) -> task<std::size_t> {
    std::vector<join_handle<int>> inner;
    for (int r = 0; r < n; ++r)
      for (unsigned i = 0; i < p->threads(); ++i)
        inner.push_back(p->spawn_on(i, where()));
    std::size_t bad = 0;
    for (std::size_t k = 0; k < inner.size(); ++k)
      if (co_await std::move(inner[k]) != expect[k % expect.size()])
        ++bad;
    co_return bad;
  };
  std::vector<join_handle<std::size_t>> outer;
  for (unsigned i = 0; i < pool.threads(); ++i)
    outer.push_back(pool.spawn_on(i, from_inside(&pool, tids, rounds)));
  for (auto& h : outer)
    EXPECT_EQ(join(pool, h), 0u) << "tasks placed from a worker started on another worker";
}

TEST_P(pool_placement, worker_index_names_the_worker_a_task_was_placed_on) {
  thread_pool pool(options_for(GetParam()));
  thread_pool other(options_for(GetParam()));
  EXPECT_FALSE(pool.worker_index().has_value()) << "the test's thread is no worker";
  for (unsigned i = 0; i < pool.threads(); ++i) {
    auto probe = [](thread_pool* p, thread_pool* q) -> task<int> {
      const auto mine = p->worker_index();
      if (q->worker_index().has_value())
        co_return -2;  // a worker of one pool is not a worker of another
      co_return mine ? static_cast<int>(*mine) : -1;
    };
    auto h = pool.spawn_on(i, probe(&pool, &other));
    EXPECT_EQ(join(pool, h), static_cast<int>(i));
  }
}

TEST_P(pool_placement, placed_tasks_wait_for_a_busy_worker_instead_of_moving) {
  thread_pool pool(options_for(GetParam()));
  const std::vector<int> tids = worker_tids(pool);
  const unsigned target = pool.threads() - 1;
  std::atomic<bool> release{false};
  std::atomic<bool> busy{false};
  // The target worker spins in one task; the other workers are idle and search for work.
  auto hog = pool.spawn_on(target, [](std::atomic<bool>* go, std::atomic<bool>* running) -> task<int> {
    running->store(true);
    while (!go->load())
      std::this_thread::yield();
    co_return 0;
  }(&release, &busy));
  ASSERT_TRUE(wait_until([&] { return busy.load(); }, 5s)) << "the hog never started";
  constexpr int n = 100;
  std::atomic<int> started{0};
  std::vector<join_handle<int>> hs;
  for (int k = 0; k < n; ++k)
    hs.push_back(pool.spawn_on(target, [](std::atomic<int>* s) -> task<int> {
      s->fetch_add(1);
      co_return os_tid();
    }(&started)));
  std::this_thread::sleep_for(50ms);  // time for idle workers to steal, if they could
  EXPECT_EQ(started.load(), 0) << "placed tasks ran while their worker was busy";
  release.store(true);
  EXPECT_EQ(join(pool, hog), 0);
  std::size_t wrong = 0;
  for (auto& h : hs)
    if (join(pool, h) != tids[target])
      ++wrong;
  EXPECT_EQ(wrong, 0u) << "placed tasks ran on another worker";
}

TEST_P(pool_placement, a_placed_task_wakes_its_sleeping_worker) {
  thread_pool pool(options_for(GetParam()));
  const std::vector<int> tids = worker_tids(pool);
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(20ms);  // every worker is past its spin and parked
    for (unsigned i = 0; i < pool.threads(); ++i) {
      std::atomic<int> tid{0};
      (void)pool.spawn_on(i, [](std::atomic<int>* out) -> task<void> {
        out->store(os_tid());
        co_return;
      }(&tid));
      ASSERT_TRUE(wait_until([&] { return tid.load() != 0; }, 5s)) << "worker " << i << " was never woken";
      EXPECT_EQ(tid.load(), tids[i]);
    }
  }
}

struct destroy_counter {
  std::atomic<int>* count;
  explicit destroy_counter(std::atomic<int>* c) : count(c) {}
  destroy_counter(destroy_counter&& o) noexcept : count(std::exchange(o.count, nullptr)) {}
  ~destroy_counter() {
    if (count != nullptr)
      count->fetch_add(1);
  }
};

task<void> counted(destroy_counter, std::atomic<int>* ran) {
  ran->fetch_add(1);
  co_return;
}

TEST_P(pool_placement, a_worker_index_past_the_pool_throws_and_destroys_the_task) {
  thread_pool pool(options_for(GetParam()));
  std::atomic<int> destroyed{0}, ran{0};
  try {
    (void)pool.spawn_on(pool.threads(), counted(destroy_counter(&destroyed), &ran));
    FAIL() << "spawn_on past the last worker did not throw";
  } catch (const std::out_of_range& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("spawn_on"), std::string::npos) << what;
    EXPECT_NE(what.find("worker " + std::to_string(pool.threads())), std::string::npos) << what;
  }
  EXPECT_EQ(destroyed.load(), 1) << "the rejected task's frame was not destroyed exactly once";
  EXPECT_EQ(ran.load(), 0);
}

TEST_P(pool_placement, tasks_placed_on_a_busy_worker_are_destroyed_once_at_shutdown) {
  std::atomic<int> destroyed{0}, ran{0};
  constexpr int n = 50;
  {
    thread_pool pool(options_for(GetParam()));
    std::atomic<bool> busy{false};
    // Blocks its worker until the pool's destructor stops it (it sees the stop request).
    (void)pool.spawn_on(0, [](std::atomic<bool>* running) -> task<void> {
      running->store(true);
      std::this_thread::sleep_for(100ms);
      co_return;
    }(&busy));
    ASSERT_TRUE(wait_until([&] { return busy.load(); }, 5s));
    for (int k = 0; k < n; ++k)
      (void)pool.spawn_on(0, counted(destroy_counter(&destroyed), &ran));
  }  // the hog ends, and the worker may run some of the placed tasks before it stops
  EXPECT_EQ(destroyed.load(), n) << "every placed task's frame is destroyed exactly once";
  EXPECT_LE(ran.load(), n);
}

// io mode: a placed task whose wake-ups come from its worker's ring stays on it.
class io_placement : public ::testing::TestWithParam<pool_config> {
 protected:
  void SetUp() override {
    if (!io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};
INSTANTIATE_TEST_SUITE_P(io, io_placement,
                         ::testing::Values(pool_config{pool_mode::io, 2}, pool_config{pool_mode::io, 4}),
                         config_name);

TEST_P(io_placement, a_task_placed_then_woken_by_its_ring_never_moves) {
  thread_pool pool(options_for(GetParam()));
  const std::vector<int> tids = worker_tids(pool);
  auto sleeper = [](int expect) -> task<int> {
    int moves = 0;
    for (int k = 0; k < 20; ++k) {
      if (os_tid() != expect)
        ++moves;
      auto s = saturn::sleep_for(100us);
      (void)co_await s;
    }
    co_return moves;
  };
  std::vector<join_handle<int>> hs;
  for (int r = 0; r < 4; ++r)
    for (unsigned i = 0; i < pool.threads(); ++i)
      hs.push_back(pool.spawn_on(i, sleeper(tids[i])));
  int moves = 0;
  for (auto& h : hs)
    moves += join(pool, h);
  EXPECT_EQ(moves, 0) << "placed tasks left their worker after a timer wake-up";
}

}  // namespace
