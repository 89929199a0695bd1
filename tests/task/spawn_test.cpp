// spawn() and join_handle<T> on the single-threaded runtime: start order, joining a task
// before and after it finished, detaching, exceptions reaching the joiner, a 100,000-task
// checksum, spawning from another OS thread while block_on runs, and yield() interleaving.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::task;
using task_test::root_ctx;

/// The runtime the calling task runs on (so a task can spawn siblings).
template <class T>
join_handle<T> spawn_here(saturn::task_context* root, task<T> t) {
  return saturn::spawn_in(*root, std::move(t));
}

/// Polls `pred` every ~200 µs for up to `limit`; true when it became true.
template <class Pred>
task<bool> wait_for(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  const auto until = saturn::clock::now() + limit;
  while (!pred()) {
    if (saturn::clock::now() > until)
      co_return false;
    (void)co_await saturn::sleep_for(200us);
  }
  co_return true;
}

task<int> record_start(std::vector<int>* order, int id) {
  order->push_back(id);
  co_return id * 10;
}

task<int> sleepy_value(std::chrono::microseconds d, int v) {
  (void)co_await saturn::sleep_for(d);
  co_return v;
}

task<long> fib(saturn::task_context* root, int n) {
  if (n < 2)
    co_return n;
  auto a = spawn_here(root, fib(root, n - 1));
  long b = co_await fib(root, n - 2);
  co_return co_await std::move(a) + b;
}

}  // namespace

static_assert(!std::is_copy_constructible_v<join_handle<int>>, "join_handle is move-only");
static_assert(std::is_nothrow_move_constructible_v<join_handle<int>>);

TEST(task_spawn, tasks_start_in_spawn_order_and_join_in_any_order) {
  saturn::runtime rt;
  std::vector<int> order;
  const int sum = rt.block_on([](std::vector<int>* ord) -> task<int> {
    auto* root = co_await root_ctx();
    std::vector<join_handle<int>> hs;
    for (int i = 0; i < 16; ++i)
      hs.push_back(spawn_here(root, record_start(ord, i)));
    EXPECT_TRUE(ord->empty());  // spawn only queues: nothing ran yet
    int s = 0;
    for (int i = 15; i >= 0; --i) {  // join in reverse
      const int v = co_await std::move(hs[static_cast<std::size_t>(i)]);
      EXPECT_EQ(v, i * 10);
      s += v;
    }
    co_return s;
  }(&order));
  EXPECT_EQ(sum, 10 * (15 * 16 / 2));
  std::vector<int> expected(16);
  for (int i = 0; i < 16; ++i)
    expected[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(order, expected);  // FIFO start on the single-threaded runtime
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, spawn_before_block_on_runs_inside_it) {
  saturn::runtime rt;
  std::vector<int> order;
  auto h = rt.spawn(record_start(&order, 7));
  EXPECT_TRUE(order.empty());
  EXPECT_FALSE(h.is_finished());
  const int v = rt.block_on([](join_handle<int> jh) -> task<int> { co_return co_await std::move(jh); }(std::move(h)));
  EXPECT_EQ(v, 70);
  EXPECT_EQ(order, std::vector<int>{7});
}

TEST(task_spawn, join_after_the_task_finished) {
  saturn::runtime rt;
  const int v = rt.block_on([]() -> task<int> {
    auto* root = co_await root_ctx();
    auto h = spawn_here(root, sleepy_value(0us, 5));
    EXPECT_TRUE(h);
    EXPECT_TRUE(co_await wait_for([&] { return h.is_finished(); }));
    EXPECT_EQ(saturn::scheduler::current()->root_context().sched, root->sched);
    co_return co_await std::move(h);  // await_ready path: no suspension
  }());
  EXPECT_EQ(v, 5);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, join_before_the_task_finished) {
  saturn::runtime rt;
  const int v = rt.block_on([](saturn::runtime* r) -> task<int> {
    auto* root = co_await root_ctx();
    const auto t0 = saturn::clock::now();
    auto h = spawn_here(root, sleepy_value(3ms, 6));
    co_await saturn::yield();  // let it start and suspend in its sleep
    EXPECT_FALSE(h.is_finished());
    EXPECT_EQ(r->live_tasks(), 1u);
    const int got = co_await std::move(h);
    EXPECT_GE(saturn::clock::now() - t0, 3ms);  // we really waited for it
    EXPECT_FALSE(h);                            // consumed
    co_return got;
  }(&rt));
  EXPECT_EQ(v, 6);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, lvalue_join_consumes_the_handle) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto* root = co_await root_ctx();
    auto h = spawn_here(root, sleepy_value(100us, 9));
    EXPECT_EQ(co_await h, 9);
    EXPECT_FALSE(h);
  }());
}

// A detached task still runs to the end, and frees itself (checked by live_tasks here and
// by ASan's leak checker in the asan-ubsan build).
TEST(task_spawn, detached_task_runs_and_frees_itself) {
  saturn::runtime rt;
  std::atomic<int> done{0};
  rt.block_on([](std::atomic<int>* d, saturn::runtime* r) -> task<> {
    auto* root = co_await root_ctx();
    for (int i = 0; i < 50; ++i) {
      (void)spawn_here(root, [](std::atomic<int>* dd, int k) -> task<std::string> {
        (void)co_await saturn::sleep_for(std::chrono::microseconds(k * 20));
        dd->fetch_add(1);
        co_return std::string(200, 'x');  // a result nobody reads, freed with the frame
      }(d, i));
    }
    // and one detached explicitly after it finished (detach() frees the frame)
    auto h = spawn_here(root, sleepy_value(0us, 1));
    EXPECT_TRUE(co_await wait_for([&] { return h.is_finished(); }));
    h.detach();
    EXPECT_FALSE(h);
    EXPECT_TRUE(co_await wait_for([&] { return d->load() == 50; }));
    EXPECT_EQ(r->live_tasks(), 0u);
  }(&done, &rt));
  EXPECT_EQ(done.load(), 50);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, move_assigning_a_handle_detaches_the_old_task) {
  saturn::runtime rt;
  int ran = 0;
  const int v = rt.block_on([](int* ran_count) -> task<int> {
    auto* root = co_await root_ctx();
    auto a = spawn_here(root, [](int* rc) -> task<int> {
      (void)co_await saturn::sleep_for(200us);
      ++*rc;
      co_return 1;
    }(ran_count));
    auto b = spawn_here(root, sleepy_value(0us, 2));
    a = std::move(b);  // the first task is detached, still runs
    const int got = co_await std::move(a);
    EXPECT_TRUE(co_await wait_for([&] { return *ran_count == 1; }));
    co_return got;
  }(&ran));
  EXPECT_EQ(v, 2);
  EXPECT_EQ(ran, 1);
}

TEST(task_spawn, exception_in_a_spawned_task_reaches_the_joiner) {
  saturn::runtime rt;
  const std::string what = rt.block_on([]() -> task<std::string> {
    auto* root = co_await root_ctx();
    auto thrower = [](bool suspend_first) -> task<int> {
      if (suspend_first)
        (void)co_await saturn::sleep_for(100us);
      throw std::runtime_error(suspend_first ? "late" : "early");
    };
    auto early = spawn_here(root, thrower(false));
    auto late = spawn_here(root, thrower(true));
    std::string seen;
    co_await saturn::yield();  // `early` has finished (with its exception) by now
    try {
      (void)co_await std::move(early);
    } catch (const std::runtime_error& e) {
      seen += e.what();
    }
    try {
      (void)co_await std::move(late);  // joined before it finished
    } catch (const std::runtime_error& e) {
      seen += std::string("+") + e.what();
    }
    co_return seen;
  }());
  EXPECT_EQ(what, "early+late");
}

TEST(task_spawn, hundred_thousand_tasks_checksum) {
  saturn::runtime rt;
  constexpr std::int64_t n = 100'000;
  const std::int64_t sum = rt.block_on([]() -> task<std::int64_t> {
    auto* root = co_await root_ctx();
    std::vector<join_handle<std::int64_t>> hs;
    hs.reserve(n);
    for (std::int64_t i = 0; i < n; ++i) {
      hs.push_back(spawn_here(root, [](std::int64_t k) -> task<std::int64_t> {
        if (k % 3 == 0)
          co_await saturn::yield();  // a third of them suspend once
        co_return k * k % 1'000'003;
      }(i)));
    }
    std::int64_t s = 0;
    for (auto& h : hs)
      s += co_await std::move(h);
    co_return s;
  }());
  std::int64_t expected = 0;
  for (std::int64_t k = 0; k < n; ++k)
    expected += k * k % 1'000'003;
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, recursive_spawn_tree) {
  saturn::runtime rt;
  const long v = rt.block_on([]() -> task<long> {
    auto* root = co_await root_ctx();
    co_return co_await fib(root, 20);
  }());
  EXPECT_EQ(v, 6765);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

// Another OS thread calls rt.spawn() while block_on runs: the task is handed over
// lock-free and runs on the runtime's thread. Half of the handles are dropped on the
// other thread (detached there, possibly while the task runs), half are handed back and
// joined.
TEST(task_spawn, spawn_from_another_thread_while_block_on_runs) {
  saturn_test::watchdog dog(20s, "spawn from another thread");
  saturn::runtime rt;
  constexpr int n = 2000;
  std::atomic<int> ran{0};
  std::atomic<bool> producer_done{false};
  std::mutex mu;
  std::vector<std::pair<int, join_handle<int>>> handed_back;
  const std::thread::id runtime_thread = std::this_thread::get_id();
  std::atomic<int> wrong_thread{0};

  auto job = [](std::atomic<int>* r, std::atomic<int>* wrong, std::thread::id expect, int i) -> task<int> {
    if (std::this_thread::get_id() != expect)
      wrong->fetch_add(1);
    if (i % 4 == 0)
      (void)co_await saturn::sleep_for(50us);
    r->fetch_add(1);
    co_return i * 2 + 1;
  };

  std::thread producer;
  const long joined_sum = rt.block_on([&]() -> task<long> {
    producer = std::thread([&] {
      std::mt19937 rng(1234);
      for (int i = 0; i < n; ++i) {
        auto h = rt.spawn(job(&ran, &wrong_thread, runtime_thread, i));
        if (i % 2 == 0) {
          std::lock_guard lock(mu);
          handed_back.emplace_back(i, std::move(h));
        }  // odd: dropped here → detached from this thread
        if (rng() % 64 == 0)
          std::this_thread::sleep_for(20us);
      }
      producer_done.store(true);
    });
    // Keep the main task alive (and the loop sleeping in between) until all arrived.
    EXPECT_TRUE(co_await wait_for([&] { return producer_done.load() && ran.load() == n; }, 15000ms));
    std::vector<std::pair<int, join_handle<int>>> mine;
    {
      std::lock_guard lock(mu);
      mine = std::move(handed_back);
    }
    long s = 0;
    for (auto& [i, h] : mine) {
      const int v = co_await std::move(h);
      EXPECT_EQ(v, i * 2 + 1);
      s += v;
    }
    co_return s;
  }());
  producer.join();
  long expected = 0;
  for (int i = 0; i < n; i += 2)
    expected += i * 2 + 1;
  EXPECT_EQ(joined_sum, expected);
  EXPECT_EQ(ran.load(), n);
  EXPECT_EQ(wrong_thread.load(), 0);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_spawn, yield_interleaves_two_tasks) {
  saturn::runtime rt;
  std::string log;
  rt.block_on([](std::string* lg) -> task<> {
    auto* root = co_await root_ctx();
    auto worker = [](std::string* l, char c, int n) -> task<> {
      for (int i = 0; i < n; ++i) {
        l->push_back(c);
        co_await saturn::yield();
      }
    };
    auto a = spawn_here(root, worker(lg, 'A', 6));
    auto b = spawn_here(root, worker(lg, 'B', 6));
    co_await std::move(a);
    co_await std::move(b);
  }(&log));
  EXPECT_EQ(log, "ABABABABABAB");
}

TEST(task_spawn, yield_lets_ready_tasks_run_first) {
  saturn::runtime rt;
  std::string log;
  rt.block_on([](std::string* lg) -> task<> {
    auto* root = co_await root_ctx();
    auto h = spawn_here(root, [](std::string* l) -> task<> {
      l->push_back('s');
      co_return;
    }(lg));
    lg->push_back('1');
    co_await saturn::yield();  // the spawned task runs before we continue
    lg->push_back('2');
    co_await std::move(h);
  }(&log));
  EXPECT_EQ(log, "1s2");
}

// spawn_in with a context of the caller's making (here: one carrying a stop token, so the
// spawned task can be cancelled from outside) works like spawning on the root context.
TEST(task_spawn, spawn_under_a_cancellable_context) {
  saturn::runtime rt;
  saturn_test::pipe_fds p;
  rt.block_on([](int rfd, saturn::runtime* r) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    std::stop_source src;
    saturn::task_context ctx{here.sched, src.get_token()};
    auto h = saturn::spawn_in(ctx, [](int fd) -> task<saturn::result<std::size_t>> {
      std::string buf(1, '\0');
      co_return co_await saturn::read(fd, std::as_writable_bytes(std::span<char>(buf.data(), 1)));
    }(rfd));
    co_await saturn::yield();  // it starts and suspends in the read
    EXPECT_FALSE(h.is_finished());
    EXPECT_EQ(r->live_tasks(), 1u) << "a task spawned under a non-root context is not counted as alive";
    src.request_stop();
    auto res = co_await std::move(h);
    EXPECT_FALSE(res.has_value());
    if (!res) {
      EXPECT_TRUE(res.err() == std::errc::operation_canceled) << res.err().message();
    }
  }(p.r, &rt));
  EXPECT_EQ(rt.live_tasks(), 0u);
}

namespace {

saturn::task<int> sleep_then(int v) {
  co_await saturn::sleep_for(std::chrono::milliseconds(1));
  auto r = co_await saturn::nop();
  EXPECT_TRUE(r.has_value());
  co_return v;
}

// Two runtimes alive on one thread, used in turns (two test files' static runtimes in one
// binary): each block_on runs with its own loop current. Before, the second one made
// stayed current, the first one's tasks submitted to its ring, and block_on slept forever.
TEST(runtime_turns, two_live_runtimes_on_one_thread_take_turns) {
  saturn::runtime a;
  saturn::runtime b;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(a.block_on(sleep_then(1)), 1);
    EXPECT_EQ(b.block_on(sleep_then(2)), 2);
  }
  EXPECT_EQ(saturn::scheduler::current(), &b) << "the last one made is current again between runs";
}

}  // namespace
