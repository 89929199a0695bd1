// thread_pool: spawn/join with checksums, nested spawns, block_on from many threads, posts from many threads and registered submitters (also more than the 64 slots).
// Every parameterized test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless
// it needs an event loop. Oracles: per-item run counters and values computed independently.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_spawn);

// ---------------------------------------------------------------------------------------
// spawn / join

task<std::uint64_t> join_all(std::vector<join_handle<std::uint64_t>> hs) {
  std::uint64_t sum = 0;
  for (auto& h : hs)
    sum += co_await std::move(h);
  co_return sum;
}

TEST_P(pool_spawn, reports_its_configuration) {
  thread_pool pool(options_for(GetParam()));
  EXPECT_EQ(pool.threads(), GetParam().threads);
  EXPECT_EQ(pool.mode(), GetParam().mode);
}

TEST_P(pool_spawn, spawn_join_checksum_from_a_task) {
  constexpr std::uint64_t n = 20'000;
  auto ran = make_flags(n);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  {
    thread_pool pool(options_for(GetParam()));
    EXPECT_EQ(pool.block_on(fan_out(&pool, n, ran.get())), expected);
  }
  expect_each_once(ran, n, "spawned task");
}

TEST_P(pool_spawn, spawn_from_outside_then_join_in_a_task) {
  constexpr std::uint64_t n = 10'000;
  auto ran = make_flags(n);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  {
    thread_pool pool(options_for(GetParam()));
    std::vector<join_handle<std::uint64_t>> hs;
    for (std::uint64_t i = 0; i < n; ++i)
      hs.push_back(pool.spawn(leaf(i, ran.get(), i % 5 == 0)));
    EXPECT_EQ(pool.block_on(join_all(std::move(hs))), expected);
  }
  expect_each_once(ran, n, "task spawned from outside");
}

// A tree of spawns 4 levels below the root (1 + 6 + 36 + 216 + 1296 tasks); each node
// returns mix(id) plus its children's values, checked against the same sum computed here.
constexpr std::uint64_t k_fanout = 6;
constexpr int k_depth = 4;
constexpr std::uint64_t k_tree_nodes = 1 + 6 + 36 + 216 + 1296;

std::uint64_t tree_expected(std::uint64_t id, int depth) {
  std::uint64_t v = mix(id);
  if (depth < k_depth)
    for (std::uint64_t k = 0; k < k_fanout; ++k)
      v += tree_expected(id * k_fanout + 1 + k, depth + 1);
  return v;
}

task<std::uint64_t> tree_node(thread_pool* pool, std::uint64_t id, int depth, std::atomic<std::uint32_t>* ran,
                              std::atomic<int>* max_depth) {
  ran[id].fetch_add(1, std::memory_order_relaxed);
  int seen = max_depth->load();
  while (depth > seen && !max_depth->compare_exchange_weak(seen, depth)) {
  }
  std::uint64_t v = mix(id);
  if (depth < k_depth) {
    std::vector<join_handle<std::uint64_t>> hs;
    for (std::uint64_t k = 0; k < k_fanout; ++k)
      hs.push_back(pool->spawn(tree_node(pool, id * k_fanout + 1 + k, depth + 1, ran, max_depth)));
    if (id % 2 == 1)
      co_await saturn::yield();
    for (auto& h : hs)
      v += co_await std::move(h);
  }
  co_return v;
}

TEST_P(pool_spawn, nested_spawns_four_levels_deep) {
  const std::uint64_t expected = tree_expected(0, 0);
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 10; ++round) {
    auto ran = make_flags(k_tree_nodes);
    std::atomic<int> max_depth{0};
    EXPECT_EQ(pool.block_on(tree_node(&pool, 0, 0, ran.get(), &max_depth)), expected) << "round " << round;
    EXPECT_EQ(max_depth.load(), k_depth);
    expect_each_once(ran, k_tree_nodes, "tree node");
  }
}

TEST_P(pool_spawn, block_on_from_many_threads_at_once) {
  thread_pool pool(options_for(GetParam()));
  constexpr int k_callers = 8;
  constexpr std::uint64_t n = 500;
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  std::vector<flags> ran;
  for (int t = 0; t < k_callers; ++t)
    ran.push_back(make_flags(n));
  std::vector<std::uint64_t> got(k_callers);
  std::latch go(k_callers);
  std::vector<std::thread> callers;
  for (int t = 0; t < k_callers; ++t)
    callers.emplace_back([&, t] {
      go.arrive_and_wait();
      got[t] = pool.block_on(fan_out(&pool, n, ran[t].get()));
    });
  for (auto& c : callers)
    c.join();
  for (int t = 0; t < k_callers; ++t) {
    EXPECT_EQ(got[t], expected) << "caller " << t;
    expect_each_once(ran[t], n, "task of a concurrent block_on");
  }
}

// ---------------------------------------------------------------------------------------
// post / submitters

TEST_P(pool_spawn, post_from_many_threads_runs_each_item_once) {
  constexpr unsigned k_threads = 8;
  const unsigned per = 50'000 / static_cast<unsigned>(k_slow);
  const std::size_t total = std::size_t{k_threads} * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  {
    thread_pool pool(options_for(GetParam()));
    std::latch go(k_threads);
    std::vector<std::thread> posters;
    for (unsigned t = 0; t < k_threads; ++t)
      posters.emplace_back([&, t] {
        go.arrive_and_wait();
        for (unsigned i = 0; i < per; ++i) {
          const std::size_t idx = std::size_t{t} * per + i;
          pool.post([r = ran.get(), d = &done, idx] {
            r[idx].fetch_add(1, std::memory_order_relaxed);
            d->fetch_add(1, std::memory_order_release);
          });
        }
      });
    for (auto& p : posters)
      p.join();
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " posted callables ran";
  }  // joins the workers: a second run of any item would show below
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "posted callable");
}

task<std::uint64_t> marked(std::uint64_t i, std::atomic<std::uint32_t>* ran, std::atomic<std::uint64_t>* done) {
  ran[i].fetch_add(1, std::memory_order_relaxed);
  done->fetch_add(1, std::memory_order_release);
  co_return mix(i);
}

/// One submitter thread's work: `per` items, alternating sub.post and sub.spawn; every
/// 8th spawn keeps its handle and is joined at the end through block_on.
void submitter_thread(thread_pool& pool, thread_pool::submitter& sub, std::size_t base, unsigned per,
                      std::atomic<std::uint32_t>* ran, std::atomic<std::uint64_t>* done, std::uint64_t* join_sum,
                      std::uint64_t* join_expected) {
  std::vector<join_handle<std::uint64_t>> kept;
  std::uint64_t expected = 0;
  for (unsigned i = 0; i < per; ++i) {
    const std::size_t idx = base + i;
    if (i % 2 == 0) {
      sub.post([ran, done, idx] {
        ran[idx].fetch_add(1, std::memory_order_relaxed);
        done->fetch_add(1, std::memory_order_release);
      });
    } else if (i % 16 == 1) {
      kept.push_back(sub.spawn(marked(idx, ran, done)));
      expected += mix(idx);
    } else {
      (void)sub.spawn(marked(idx, ran, done));  // detached at once
    }
  }
  *join_sum = pool.block_on(join_all(std::move(kept)));
  *join_expected = expected;
}

TEST_P(pool_spawn, registered_submitters_each_item_runs_once) {
  constexpr unsigned k_threads = 8;
  const unsigned per = 50'000 / static_cast<unsigned>(k_slow);
  const std::size_t total = std::size_t{k_threads} * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  std::vector<std::uint64_t> sums(k_threads), expected(k_threads);
  {
    thread_pool pool(options_for(GetParam()));
    std::latch go(k_threads);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < k_threads; ++t)
      threads.emplace_back([&, t] {
        auto sub = pool.register_submitter();
        go.arrive_and_wait();
        submitter_thread(pool, sub, std::size_t{t} * per, per, ran.get(), &done, &sums[t], &expected[t]);
      });
    for (auto& th : threads)
      th.join();
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " submitted items ran";
  }
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "submitted item");
  for (unsigned t = 0; t < k_threads; ++t)
    EXPECT_EQ(sums[t], expected[t]) << "joins of submitter " << t;
}

// 80 threads hold a submitter at once: 64 get a queue of their own, the rest fall back to
// the injection queue. A second wave reuses the released queues.
TEST_P(pool_spawn, more_submitters_than_slots_fall_back) {
  constexpr unsigned k_threads = 80;
  const unsigned per = 2'000 / static_cast<unsigned>(k_slow);
  constexpr int k_waves = 2;
  const std::size_t total = std::size_t{k_waves} * k_threads * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  std::vector<std::uint64_t> sums(k_waves * k_threads), expected(k_waves * k_threads);
  {
    thread_pool pool(options_for(GetParam()));
    for (int wave = 0; wave < k_waves; ++wave) {
      std::latch registered(k_threads);
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < k_threads; ++t)
        threads.emplace_back([&, t, wave] {
          auto sub = pool.register_submitter();
          registered.arrive_and_wait();  // every one registered before anyone submits
          const unsigned slot = static_cast<unsigned>(wave) * k_threads + t;
          submitter_thread(pool, sub, std::size_t{slot} * per, per, ran.get(), &done, &sums[slot], &expected[slot]);
        });
      for (auto& th : threads)
        th.join();
    }
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " submitted items ran";
  }
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "item of an overflow submitter");
  for (std::size_t s = 0; s < sums.size(); ++s)
    EXPECT_EQ(sums[s], expected[s]) << "joins of submitter " << s;
}


}  // namespace
