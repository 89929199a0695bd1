// The free saturn::spawn / saturn::spawn_on on a thread_pool: from a task (and from a
// posted callable on a worker) they start tasks on the caller's own pool, under its root
// context; join values and exceptions arrive; detached tasks run to their end; spawn_on
// places the task on the named worker (oracle: thread_pool::worker_index() in the task's
// first step) and a bad index throws std::out_of_range and destroys the task unstarted.
// Every test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_free_spawn);

/// The worker the task's first step ran on, and the pool it ran on.
struct placed {
  std::optional<unsigned> worker;
  saturn::scheduler* sched = nullptr;
};

task<placed> report(thread_pool* pool) {
  placed p{pool->worker_index(), saturn::scheduler::current()};
  co_return p;
}

task<int> refused(std::shared_ptr<int> marker, std::atomic<bool>* started) {
  started->store(true);
  (void)marker;
  co_return 0;
}

}  // namespace

TEST_P(pool_free_spawn, spawn_from_a_task_runs_on_the_same_pool_and_joins) {
  thread_pool pool(options_for(GetParam()));
  constexpr std::uint64_t n = 2000 / k_slow;
  auto ran = make_flags(n);
  const std::uint64_t sum = pool.block_on([](thread_pool* p, std::atomic<std::uint32_t>* r) -> task<std::uint64_t> {
    std::vector<join_handle<std::uint64_t>> hs;
    for (std::uint64_t i = 0; i < n; ++i)
      hs.push_back(saturn::spawn(leaf(i, r, i % 3 == 0)));
    auto here = co_await saturn::spawn(report(p));
    EXPECT_TRUE(here.worker.has_value()) << "the child did not run on a worker of the caller's pool";
    EXPECT_EQ(here.sched, p);
    std::uint64_t s = 0;
    for (auto& h : hs)
      s += co_await std::move(h);
    co_return s;
  }(&pool, ran.get()));
  std::uint64_t expect = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expect += mix(i);
  EXPECT_EQ(sum, expect);
  expect_each_once(ran, n, "spawned leaf");
}

TEST_P(pool_free_spawn, a_childs_exception_reaches_the_joiner) {
  thread_pool pool(options_for(GetParam()));
  const std::string what = pool.block_on([]() -> task<std::string> {
    auto h = saturn::spawn([]() -> task<int> {
      co_await saturn::yield();
      throw std::runtime_error("child failed");
    }());
    try {
      (void)co_await std::move(h);
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "no exception";
  }());
  EXPECT_EQ(what, "child failed");
}

// Detached children (from a task and from a callable posted to a worker) all finish.
TEST_P(pool_free_spawn, detached_children_run_to_their_end) {
  thread_pool pool(options_for(GetParam()));
  constexpr int n = 500;
  std::atomic<int> done{0};
  auto child = [](std::atomic<int>* d) -> task<> {
    co_await saturn::yield();
    d->fetch_add(1);
  };
  pool.block_on([](std::atomic<int>* d, decltype(child) c) -> task<> {
    for (int i = 0; i < n; ++i)
      saturn::spawn(c(d)).detach();
    co_return;
  }(&done, child));
  for (int i = 0; i < n; ++i)
    pool.post([&done, child] { (void)saturn::spawn(child(&done)); });
  EXPECT_TRUE(wait_until([&] { return done.load() == 2 * n; }, 20s)) << done.load() << " of " << 2 * n;
}

TEST_P(pool_free_spawn, spawn_on_starts_the_task_on_the_named_worker) {
  thread_pool pool(options_for(GetParam()));
  constexpr int rounds = 50 / k_slow;
  const std::size_t wrong = pool.block_on([](thread_pool* p) -> task<std::size_t> {
    std::vector<join_handle<placed>> hs;
    for (int r = 0; r < rounds; ++r)
      for (unsigned w = 0; w < p->threads(); ++w)
        hs.push_back(saturn::spawn_on(w, report(p)));
    std::size_t bad = 0;
    for (std::size_t k = 0; k < hs.size(); ++k) {
      placed got = co_await std::move(hs[k]);
      if (got.worker != std::optional<unsigned>(static_cast<unsigned>(k % p->threads())) || got.sched != p)
        ++bad;
    }
    co_return bad;
  }(&pool));
  EXPECT_EQ(wrong, 0u) << "tasks placed with saturn::spawn_on started on another worker";
}

TEST_P(pool_free_spawn, spawn_on_a_missing_worker_throws_and_destroys_the_task) {
  thread_pool pool(options_for(GetParam()));
  auto marker = std::make_shared<int>(0);
  std::atomic<bool> started{false};
  const std::string what = pool.block_on([](thread_pool* p, std::shared_ptr<int> m, std::atomic<bool>* s) -> task<std::string> {
    try {
      (void)saturn::spawn_on(p->threads(), refused(std::move(m), s));
    } catch (const std::out_of_range& e) {
      co_return e.what();
    }
    co_return "no exception";
  }(&pool, marker, &started));
  EXPECT_NE(what.find("thread_pool::spawn_on: worker " + std::to_string(pool.threads()) + " does not exist"),
            std::string::npos)
      << what;
  EXPECT_FALSE(started.load());
  EXPECT_EQ(marker.use_count(), 1) << "the refused task's frame was not destroyed";
}

// A thread that is not one of the pool's workers (here: the test's own) has no scheduler.
TEST(pool_free_spawn_outside, a_thread_outside_every_scheduler_gets_a_logic_error) {
  thread_pool pool(pool_options{.threads = 1, .mode = pool_mode::cpu_bound});
  std::string what;
  std::thread([&] {
    try {
      (void)saturn::spawn(leaf(0, nullptr, false));
    } catch (const std::logic_error& e) {
      what = e.what();
    }
  }).join();
  EXPECT_NE(what.find("no saturn scheduler"), std::string::npos) << what;
}
