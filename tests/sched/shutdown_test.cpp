// Destroying a thread_pool with work left: tasks queued and never started (in the
// injection queue, in workers' LIFO slots and deques, in submitters' queues), posted
// callables never run, tasks suspended on 10 s sleeps, blocked in pipe reads (in-flight
// io_uring operations on several rings), suspended on joins of other tasks, yielding
// forever, and awaiting spawn_blocking calls. Oracles: every object captured in a task or
// callable is destroyed exactly once (probe counters), none of the abandoned bodies runs
// on, join handles held outside report task_abandoned, no thread is left behind (counted
// in /proc/self/task), and the destructor does not wait for the sleeps. The asan-ubsan and
// tsan builds check the same paths for use-after-free and races.
#include "loop/test_support.hpp"
#include "sched/pool_test_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

/// Thread ids of this process, not counting the kernel's io_uring workers (iou-wrk-*,
/// iou-sqp-*), which the kernel retires on its own schedule.
std::set<int> thread_ids() {
  std::set<int> ids;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr)
    return ids;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name.rfind("iou-", 0) == 0)
      continue;
    ids.insert(std::atoi(e->d_name));
  }
  ::closedir(d);
  return ids;
}

/// The threads alive before a pool is made. A sanitizer may start a helper thread of its
/// own at the first pthread_create of the process, so one thread is made (and joined) first.
std::set<int> baseline_threads() {
  std::thread([] {}).join();
  return thread_ids();
}

/// Threads now alive that were not in `baseline`. Compared by id, not by count: a thread
/// left from an earlier test (an idle spawn_blocking thread timing out) may exit meanwhile.
std::size_t new_threads(const std::set<int>& baseline) {
  std::size_t n = 0;
  for (int id : thread_ids())
    n += baseline.count(id) == 0 ? 1 : 0;
  return n;
}

/// A joined thread may still be listed for a moment after pthread_join returns.
void expect_threads_back_to(const std::set<int>& baseline) {
  EXPECT_TRUE(wait_until([&] { return new_threads(baseline) == 0; }, 2000ms))
      << "threads left behind: " << new_threads(baseline) << " not there before the pool";
}

/// Counts objects living in frames and callables: created when made, destroyed when the
/// (non-moved-from) copy goes; `finished` counts bodies that ran to their end.
struct probe_counts {
  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> finished{0};
  std::atomic<int> started{0};
};
struct probe {
  probe_counts* c;
  explicit probe(probe_counts* counts) : c(counts) { c->created.fetch_add(1); }
  probe(probe&& o) noexcept : c(std::exchange(o.c, nullptr)) {}
  probe(const probe&) = delete;
  probe& operator=(const probe&) = delete;
  ~probe() {
    if (c != nullptr) {
      const int d = c->destroyed.fetch_add(1) + 1;
      if (d > c->created.load())
        std::fprintf(stderr, "probe: destroyed more often than created\n");
    }
  }
};

void expect_all_destroyed_once(const probe_counts& c) {
  EXPECT_GT(c.created.load(), 0);
  EXPECT_EQ(c.destroyed.load(), c.created.load()) << "objects in frames/callables: created " << c.created.load()
                                                  << ", destroyed " << c.destroyed.load();
}

task<int> never_started(probe pr) {
  pr.c->finished.fetch_add(1);
  co_return 1;
}

task<int> long_sleeper(probe pr) {
  pr.c->started.fetch_add(1);
  (void)co_await saturn::sleep_for(10s);
  pr.c->finished.fetch_add(1);
  co_return 2;
}

task<int> blocked_reader(probe pr, int fd) {
  pr.c->started.fetch_add(1);
  char buf[16];
  auto r = co_await saturn::read(fd, std::as_writable_bytes(std::span<char>(buf)));
  pr.c->finished.fetch_add(1);
  co_return r ? 3 : -3;
}

task<int> timed_reader(probe pr, int fd) {
  auto r = co_await saturn::with_timeout(10s, blocked_reader(probe(pr.c), fd));
  pr.c->finished.fetch_add(1);
  co_return r ? *r : -4;
}

task<int> joiner(probe pr, join_handle<int> h) {
  pr.c->started.fetch_add(1);
  int v = co_await std::move(h);
  pr.c->finished.fetch_add(1);
  co_return v;
}

task<int> yield_forever(probe pr) {
  pr.c->started.fetch_add(1);
  for (;;)
    co_await saturn::yield();
  co_return 0;
}

struct checked_pipe : saturn_test::pipe_fds {
  /// True if a byte written now is read back: no cancelled read is still consuming data.
  bool intact() const {
    if (::write(w, "q", 1) != 1)
      return false;
    char c = 0;
    return ::read(r, &c, 1) == 1 && c == 'q';
  }
};

class shutdown_test : public saturn_test::pool_test_base {};
INSTANTIATE_TEST_SUITE_P(modes, shutdown_test,
                         ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2},
                                           pool_config{pool_mode::io, 4}, pool_config{pool_mode::cpu_bound, 1},
                                           pool_config{pool_mode::cpu_bound, 2},
                                           pool_config{pool_mode::cpu_bound, 4}),
                         config_name);

class io_shutdown_test : public saturn_test::pool_test_base {};
INSTANTIATE_TEST_SUITE_P(io, io_shutdown_test,
                         ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2},
                                           pool_config{pool_mode::io, 4}),
                         config_name);

// ---------------------------------------------------------------------------------------
// Queued work that never starts. Every worker is held by a "hog" task (it sleeps, it does
// not yield), so nothing queued behind them can run; the hogs queue work in their own
// LIFO slots and deques, and the test thread queues more through every outside path.
// The hogs let go only after the destructor has begun (the destroying thread sleeps).

struct hog_state {
  unsigned workers = 0;
  int main_tid = 0;  // the thread that destroys the pool
  std::atomic<unsigned> running{0};
  std::atomic<unsigned> queued{0};
  std::atomic<bool> release{false};
};

/// The scheduler state letter of thread `tid` of this process ('R', 'S', 'D', ...).
char thread_state(int tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

task<void> hog(thread_pool* pool, hog_state* hs, probe_counts* c) {
  hs->running.fetch_add(1);
  // wait until every worker holds a hog, so nothing queued below can be stolen
  while (hs->running.load() < hs->workers && !hs->release.load())
    std::this_thread::sleep_for(100us);
  for (int i = 0; i < 100; ++i)
    (void)pool->spawn(never_started(probe(c)));  // LIFO slot, then the deque
  for (int i = 0; i < 50; ++i)
    pool->post([p = probe(c)] { p.c->finished.fetch_add(1); });
  hs->queued.fetch_add(1);
  while (!hs->release.load())
    std::this_thread::sleep_for(200us);
  // Let go only once the destroying thread sleeps: after `release` it does nothing but
  // enter the destructor, which sets its stop flag and then waits for the workers.
  for (int asleep = 0; asleep < 3;) {  // three looks 1 ms apart: not a passing lock wait
    asleep = thread_state(hs->main_tid) == 'S' ? asleep + 1 : 0;
    std::this_thread::sleep_for(1ms);
  }
  co_return;
}

TEST_P(shutdown_test, queued_tasks_and_callables_never_started_are_destroyed_once) {
  const std::set<int> baseline = baseline_threads();
  probe_counts c;
  std::vector<join_handle<int>> held;  // handles to never-started tasks, kept past the pool
  hog_state hs;  // outlives the pool: the hogs read it until the destructor stops them
  {
    thread_pool pool(options_for(GetParam()));
    hs.workers = GetParam().threads;
    hs.main_tid = static_cast<int>(::gettid());
    for (unsigned i = 0; i < hs.workers; ++i)
      (void)pool.spawn(hog(&pool, &hs, &c));
    ASSERT_TRUE(wait_until([&] { return hs.queued.load() == hs.workers; }, 10'000ms * k_slow))
        << "the hogs never all ran (" << hs.running.load() << " of " << hs.workers << "): a lost wake-up?";
    // from outside: the injection queue
    for (int i = 0; i < 500; ++i)
      (void)pool.spawn(never_started(probe(&c)));
    for (int i = 0; i < 20; ++i)
      held.push_back(pool.spawn(never_started(probe(&c))));
    for (int i = 0; i < 500; ++i)
      pool.post([p = probe(&c)] { p.c->finished.fetch_add(1); });
    // a registered submitter's queue, and an overflow submitter on another thread
    auto sub = pool.register_submitter();
    for (int i = 0; i < 200; ++i)
      sub.post([p = probe(&c)] { p.c->finished.fetch_add(1); });
    for (int i = 0; i < 200; ++i)
      (void)sub.spawn(never_started(probe(&c)));
    std::thread other([&] {
      auto s2 = pool.register_submitter();
      for (int i = 0; i < 300; ++i)
        (void)s2.spawn(never_started(probe(&c)));
    });
    other.join();
    // joiners queued behind the hogs, joining tasks queued behind the hogs
    for (int i = 0; i < 20; ++i)
      (void)pool.spawn(joiner(probe(&c), pool.spawn(never_started(probe(&c)))));
    EXPECT_EQ(c.destroyed.load(), 0);
    hs.release.store(true);
  }
  EXPECT_EQ(c.finished.load(), 0) << "queued work ran after the pool began shutting down";
  EXPECT_EQ(c.started.load(), 0);
  // the held handles see an abandoned task; their frames go with them
  for (auto& h : held)
    EXPECT_TRUE(h.is_finished());
  EXPECT_LT(c.destroyed.load(), c.created.load());
  held.clear();
  expect_all_destroyed_once(c);
  expect_threads_back_to(baseline);
}

// ---------------------------------------------------------------------------------------
// Suspended tasks (io mode: sleeps, pipe reads, with_timeout, joins).

task<void> spread(thread_pool* pool, probe_counts* c, int fd, int n) {
  // spawned from inside the pool: these start on whichever worker runs this
  for (int i = 0; i < n; ++i) {
    (void)pool->spawn(long_sleeper(probe(c)));
    (void)pool->spawn(blocked_reader(probe(c), fd));
    co_await saturn::yield();
  }
}

TEST_P(io_shutdown_test, suspended_on_sleeps_reads_and_joins) {
  const std::set<int> baseline = baseline_threads();
  probe_counts c;
  checked_pipe p;  // outlives the pool: reads are cancelled while it is open
  std::vector<checked_pipe> more(4);
  std::chrono::steady_clock::duration destroy_time{};
  {
    std::optional<thread_pool> opt;
    thread_pool& pool = opt.emplace(options_for(GetParam()));
    int expect_started = 0;
    for (int i = 0; i < 200; ++i)
      (void)pool.spawn(long_sleeper(probe(&c)));
    expect_started += 200;
    for (int i = 0; i < 64; ++i)
      (void)pool.spawn(blocked_reader(probe(&c), p.r));
    expect_started += 64;
    for (int i = 0; i < 16; ++i)
      (void)pool.spawn(blocked_reader(probe(&c), more[static_cast<std::size_t>(i) % more.size()].r));
    expect_started += 16;
    for (int i = 0; i < 8; ++i)
      (void)pool.spawn(timed_reader(probe(&c), p.r));
    expect_started += 8;  // the inner readers
    for (int i = 0; i < 4; ++i)
      (void)pool.spawn(spread(&pool, &c, p.r, 25));
    expect_started += 4 * 50;
    // joins: of a sleeper, of a joiner of a sleeper, of a reader
    auto inner = pool.spawn(joiner(probe(&c), pool.spawn(long_sleeper(probe(&c)))));
    (void)pool.spawn(joiner(probe(&c), std::move(inner)));
    (void)pool.spawn(joiner(probe(&c), pool.spawn(blocked_reader(probe(&c), p.r))));
    expect_started += 2 + 1 + 2;
    ASSERT_TRUE(wait_until([&] { return c.started.load() == expect_started; }, 10'000ms * k_slow))
        << "only " << c.started.load() << " of " << expect_started << " tasks started";
    std::this_thread::sleep_for(10ms);  // all suspended (the reads in flight, the workers parked)
    EXPECT_EQ(c.finished.load(), 0);
    const auto t0 = std::chrono::steady_clock::now();
    opt.reset();
    destroy_time = std::chrono::steady_clock::now() - t0;
  }
  EXPECT_LT(destroy_time, 5s) << "the destructor waited for the sleeps instead of abandoning them";
  EXPECT_EQ(c.finished.load(), 0) << "an abandoned task ran on";
  expect_all_destroyed_once(c);
  EXPECT_TRUE(p.intact()) << "a cancelled read still consumed data after the pool was destroyed";
  for (auto& m : more)
    EXPECT_TRUE(m.intact());
  expect_threads_back_to(baseline);
}

task<int> await_abandoned(join_handle<int> h) {
  try {
    (void)co_await std::move(h);
  } catch (const saturn::task_abandoned&) {
    co_return 1;
  }
  co_return 0;
}

// A join handle kept outside the pool: after the pool is gone it reports the task as
// finished, and awaiting it (from another runtime) throws task_abandoned.
TEST_P(io_shutdown_test, handles_held_outside_report_task_abandoned) {
  probe_counts c;
  checked_pipe p;
  std::vector<join_handle<int>> held;
  {
    thread_pool pool(options_for(GetParam()));
    for (int i = 0; i < 8; ++i)
      held.push_back(pool.spawn(long_sleeper(probe(&c))));
    for (int i = 0; i < 8; ++i)
      held.push_back(pool.spawn(blocked_reader(probe(&c), p.r)));
    ASSERT_TRUE(wait_until([&] { return c.started.load() == 16; }, 10'000ms * k_slow));
    for (auto& h : held)
      EXPECT_FALSE(h.is_finished());
  }
  EXPECT_LT(c.destroyed.load(), c.created.load()) << "frames with live handles must wait for their handles";
  saturn::runtime rt;
  int abandoned = 0;
  for (auto& h : held) {
    EXPECT_TRUE(h.is_finished());
    abandoned += rt.block_on(await_abandoned(std::move(h)));
  }
  EXPECT_EQ(abandoned, 16);
  EXPECT_EQ(c.finished.load(), 0);
  held.clear();
  expect_all_destroyed_once(c);
  EXPECT_TRUE(p.intact());
}

// ---------------------------------------------------------------------------------------
// cpu_bound and io: tasks yielding forever (always queued, on the yielded lists), and
// joins of them.

TEST_P(shutdown_test, yielding_forever_and_joins_of_them) {
  const std::set<int> baseline = baseline_threads();
  probe_counts c;
  {
    thread_pool pool(options_for(GetParam()));
    const int n = static_cast<int>(GetParam().threads) * 2;
    for (int i = 0; i < n; ++i) {
      auto y = pool.spawn(yield_forever(probe(&c)));
      auto j1 = pool.spawn(joiner(probe(&c), std::move(y)));
      (void)pool.spawn(joiner(probe(&c), std::move(j1)));  // a chain of joins
    }
    ASSERT_TRUE(wait_until([&] { return c.started.load() == 3 * n; }, 10'000ms * k_slow));
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(c.finished.load(), 0);
  expect_all_destroyed_once(c);
  expect_threads_back_to(baseline);
}

// ---------------------------------------------------------------------------------------
// Tasks suspended on spawn_blocking calls still running when the pool is destroyed: the
// frames go; the calls finish later and must not touch them.

task<int> awaits_blocking(thread_pool* pool, probe pr, std::atomic<int>* calls_started) {
  pr.c->started.fetch_add(1);
  int v = co_await pool->spawn_blocking([calls_started] {
    calls_started->fetch_add(1);
    std::this_thread::sleep_for(200ms);
    return 5;
  });
  pr.c->finished.fetch_add(1);
  co_return v;
}

TEST_P(shutdown_test, tasks_awaiting_spawn_blocking) {
  const std::set<int> baseline = baseline_threads();
  probe_counts c;
  std::atomic<int> calls_started{0};
  {
    thread_pool pool(options_for(GetParam()));
    for (int i = 0; i < 4; ++i)
      (void)pool.spawn(awaits_blocking(&pool, probe(&c), &calls_started));
    ASSERT_TRUE(wait_until([&] { return calls_started.load() == 4 && c.started.load() == 4; }, 10'000ms * k_slow));
    std::this_thread::sleep_for(5ms);  // the tasks are suspended on the results
  }  // the blocking calls are still sleeping here
  EXPECT_EQ(c.finished.load(), 0);
  expect_all_destroyed_once(c);
  expect_threads_back_to(baseline);
}

// ---------------------------------------------------------------------------------------
// Many pools built and destroyed at random moments of random work (fixed seed).

task<int> random_work(thread_pool* pool, probe pr, std::uint32_t seed, int depth, bool io) {
  pr.c->started.fetch_add(1);
  std::minstd_rand rng(seed);
  int v = 0;
  for (int step = 0; step < 20; ++step) {
    switch (rng() % 5) {
      case 0: co_await saturn::yield(); break;
      case 1:
        if (depth < 3)
          (void)pool->spawn(random_work(pool, probe(pr.c), static_cast<std::uint32_t>(rng()), depth + 1, io));
        break;
      case 2:
        if (depth < 3)
          v += co_await pool->spawn(random_work(pool, probe(pr.c), static_cast<std::uint32_t>(rng()), depth + 1, io));
        break;
      case 3:
        if (io)
          (void)co_await saturn::sleep_for(std::chrono::microseconds(rng() % 2000));
        break;
      case 4: pool->post([p = probe(pr.c)] { p.c->finished.fetch_add(0); }); break;
    }
  }
  co_return v + 1;
}

TEST_P(shutdown_test, destroyed_at_random_moments_of_random_work) {
  const std::set<int> baseline = baseline_threads();
  std::minstd_rand rng(0x5eed);
  const bool io = GetParam().mode == pool_mode::io;
  for (int round = 0; round < 20; ++round) {
    probe_counts c;
    {
      thread_pool pool(options_for(GetParam()));
      for (int i = 0; i < 20; ++i)
        (void)pool.spawn(random_work(&pool, probe(&c), static_cast<std::uint32_t>(rng()), 0, io));
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    }
    EXPECT_EQ(c.destroyed.load(), c.created.load()) << "round " << round;
  }
  expect_threads_back_to(baseline);
}

TEST_P(shutdown_test, idle_pool_leaves_no_thread) {
  const std::set<int> baseline = baseline_threads();
  for (int i = 0; i < 20; ++i) {
    thread_pool pool(options_for(GetParam()));
    if (i % 2 == 0)
      std::this_thread::sleep_for(1ms);  // parked workers
  }  // or destroyed while still starting/searching
  expect_threads_back_to(baseline);
}

}  // namespace
