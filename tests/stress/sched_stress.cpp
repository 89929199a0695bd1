// Randomized stress of the whole work-stealing scheduler. External threads (plain
// post/spawn, a registered submitter, block_on callers) and the tasks themselves run
// random sequences of spawn (detached or held) / nested spawn / join / inline await /
// yield / sleep_for(0-100 us) / post / spawn_blocking, for a bounded time, in both pool
// modes with 1, 2 and 4 workers. A global oracle checks that every unit of work that was
// created ran exactly once, that every join returned the value (or the exception) the
// joined unit was bound to produce, and that everything created also finished once the
// submitters stop (a lost wake-up leaves work behind and fails the drain deadline).
//
// Environment: SATURN_STRESS_SEED (default 20240601) picks every random choice;
// SATURN_STRESS_SECONDS (default 6) is the total running time over all configurations.
#include "sched/pool_test_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::pool_mode;
using saturn::pool_options;
using saturn::task;
using saturn::thread_pool;

using saturn_test::io_uring_unavailable;
using saturn_test::k_slow;
using saturn_test::mix;

/// A small deterministic generator (xorshift64*), seeded per unit.
struct rng64 {
  std::uint64_t s;
  explicit rng64(std::uint64_t seed) : s(mix(seed) | 1) {}
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
};

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    return fallback;
  return std::strtoull(v, nullptr, 0);
}
double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    return fallback;
  return std::strtod(v, nullptr);
}

struct unit_error : std::runtime_error {
  std::uint64_t id;
  explicit unit_error(std::uint64_t i) : std::runtime_error("unit " + std::to_string(i) + " failed"), id(i) {}
};

constexpr std::uint64_t k_none = ~std::uint64_t{0};

constexpr int k_max_depth = 6;

/// The global oracle and the knobs every unit reads.
struct stress_state {
  static constexpr std::uint64_t k_capacity = std::uint64_t{1} << 24;
  static constexpr std::int64_t k_max_outstanding = 20'000;

  thread_pool* pool = nullptr;
  bool io = false;
  std::uint64_t seed = 0;
  std::unique_ptr<std::atomic<std::uint8_t>[]> made{new std::atomic<std::uint8_t>[k_capacity]()};
  std::unique_ptr<std::atomic<std::uint8_t>[]> ran{new std::atomic<std::uint8_t>[k_capacity]()};
  std::atomic<std::uint64_t> next_id{0};
  std::atomic<std::int64_t> outstanding{0};  // created and not yet finished
  std::atomic<bool> draining{false};         // no new units
  std::atomic<std::uint64_t> joins{0}, join_errors{0}, exceptions{0};
  std::atomic<std::uint64_t> sleeps{0}, sleep_errors{0}, blocking_calls{0}, blocking_errors{0};
  std::atomic<std::uint64_t> posts{0}, inline_awaits{0};

  /// A fresh unit id, or k_none when draining, at capacity, or with too much in flight.
  std::uint64_t new_id() {
    if (draining.load(std::memory_order_relaxed) || outstanding.load(std::memory_order_relaxed) > k_max_outstanding)
      return k_none;
    const std::uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
    if (id >= k_capacity)
      return k_none;
    made[id].store(1, std::memory_order_relaxed);
    outstanding.fetch_add(1, std::memory_order_relaxed);
    return id;
  }
  void ran_once(std::uint64_t id) { ran[id].fetch_add(1, std::memory_order_relaxed); }
  void finished() { outstanding.fetch_sub(1, std::memory_order_acq_rel); }

  std::uint64_t value_of(std::uint64_t id) const { return mix(seed ^ (id * 0x2545F4914F6CDD1Dull)); }
  /// Units whose result someone awaits throw for ~1 in 29 ids.
  bool throws(std::uint64_t id, bool awaited) const { return awaited && value_of(id) % 29 == 0; }
};

task<std::uint64_t> unit(stress_state* s, std::uint64_t id, int depth, bool awaited);

/// Awaits `h` (the handle of unit `cid`) and checks the outcome against the oracle.
task<void> join_checked(stress_state* s, join_handle<std::uint64_t> h, std::uint64_t cid) {
  bool ok = false;
  try {
    const std::uint64_t v = co_await std::move(h);
    ok = !s->throws(cid, true) && v == s->value_of(cid);
  } catch (const unit_error& e) {
    ok = s->throws(cid, true) && e.id == cid;
    s->exceptions.fetch_add(1, std::memory_order_relaxed);
  } catch (const saturn::task_abandoned&) {
    ok = false;
  }
  s->joins.fetch_add(1, std::memory_order_relaxed);
  if (!ok)
    s->join_errors.fetch_add(1, std::memory_order_relaxed);
}

void post_unit(stress_state* s) {
  const std::uint64_t id = s->new_id();
  if (id == k_none)
    return;
  s->posts.fetch_add(1, std::memory_order_relaxed);
  s->pool->post([s, id] {
    s->ran_once(id);
    s->finished();
  });
}

struct held_child {
  join_handle<std::uint64_t> h;
  std::uint64_t id;
};

task<std::uint64_t> unit(stress_state* s, std::uint64_t id, int depth, bool awaited) {
  s->ran_once(id);
  struct finish_guard {
    stress_state* s;
    ~finish_guard() { s->finished(); }  // the body ended (returned or threw)
  } guard{s};
  rng64 rng(s->seed ^ (id * 0x9E3779B97F4A7C15ull));
  std::vector<held_child> held;
  const unsigned steps = rng.below(10);
  for (unsigned step = 0; step < steps; ++step) {
    const unsigned action = rng.below(11);
    const bool may_nest = depth < k_max_depth;
    switch (action) {
      case 0:  // spawn, detached at once
        if (may_nest) {
          const std::uint64_t cid = s->new_id();
          if (cid != k_none)
            (void)s->pool->spawn(unit(s, cid, depth + 1, false));
        }
        break;
      case 1:  // spawn and hold (joined later)
      case 2:
        if (may_nest) {
          const std::uint64_t cid = s->new_id();
          if (cid != k_none) {
            if (action == 1) {
              held.push_back({s->pool->spawn(unit(s, cid, depth + 1, true)), cid});
            } else {
              saturn::task_context& ctx = co_await saturn::this_task::context();
              held.push_back({saturn::spawn_in(ctx.sched->root_context(), unit(s, cid, depth + 1, true)), cid});
            }
          }
        }
        break;
      case 3:  // join the oldest held child
        if (!held.empty()) {
          held_child c = std::move(held.front());
          held.erase(held.begin());
          co_await join_checked(s, std::move(c.h), c.id);
        }
        break;
      case 4: co_await saturn::yield(); break;
      case 5:  // sleep 0-100 us (io mode; cpu_bound workers have no timers)
        if (s->io) {
          const auto d = std::chrono::microseconds(rng.below(101));
          const auto t0 = saturn::clock::now();
          auto r = co_await saturn::sleep_for(d);
          s->sleeps.fetch_add(1, std::memory_order_relaxed);
          if (!r || saturn::clock::now() - t0 < d)
            s->sleep_errors.fetch_add(1, std::memory_order_relaxed);
        } else {
          co_await saturn::yield();
        }
        break;
      case 6: post_unit(s); break;
      case 7:  // nested: await a child unit inline (not spawned)
        if (may_nest) {
          const std::uint64_t cid = s->new_id();
          if (cid != k_none) {
            bool ok = false;
            try {
              const std::uint64_t v = co_await unit(s, cid, depth + 1, true);
              ok = !s->throws(cid, true) && v == s->value_of(cid);
            } catch (const unit_error& e) {
              ok = s->throws(cid, true) && e.id == cid;
            }
            s->inline_awaits.fetch_add(1, std::memory_order_relaxed);
            if (!ok)
              s->join_errors.fetch_add(1, std::memory_order_relaxed);
          }
        }
        break;
      case 8:  // a nested spawn two levels down, joined here
        if (depth + 2 <= k_max_depth) {
          const std::uint64_t cid = s->new_id();
          if (cid != k_none)
            co_await join_checked(s, s->pool->spawn(unit(s, cid, depth + 1, true)), cid);
        }
        break;
      case 9:  // spawn_blocking, rarely
        if (rng.below(8) == 0) {
          const std::uint64_t token = rng.next();
          const bool fail = token % 5 == 0;
          bool ok = false;
          try {
            const std::uint64_t v = co_await s->pool->spawn_blocking([token, fail] {
              if (fail)
                throw unit_error(token);
              return mix(token);
            });
            ok = !fail && v == mix(token);
          } catch (const unit_error& e) {
            ok = fail && e.id == token;
          }
          s->blocking_calls.fetch_add(1, std::memory_order_relaxed);
          if (!ok)
            s->blocking_errors.fetch_add(1, std::memory_order_relaxed);
        }
        break;
      case 10:  // drop a held handle: the child runs on, detached (it was told it may
                // throw, so only drop ones that will not)
        if (!held.empty() && !s->throws(held.back().id, true))
          held.pop_back();
        break;
    }
  }
  for (auto& c : held)
    co_await join_checked(s, std::move(c.h), c.id);
  if (s->throws(id, awaited))
    throw unit_error(id);
  co_return s->value_of(id);
}

task<void> join_all_checked(stress_state* s, std::vector<held_child> held) {
  for (auto& c : held)
    co_await join_checked(s, std::move(c.h), c.id);
}

/// One external thread: `kind` 0 posts and spawns through the pool, 1 through a
/// registered submitter, 2 runs units with block_on, 3 mixes all and pauses often.
void external(stress_state* s, int kind, std::uint64_t seed, std::chrono::steady_clock::time_point until,
              std::atomic<std::uint64_t>* block_on_errors) {
  rng64 rng(seed);
  std::optional<thread_pool::submitter> sub;
  if (kind == 1 || kind == 3)
    sub.emplace(s->pool->register_submitter());
  std::vector<held_child> held;
  while (std::chrono::steady_clock::now() < until) {
    const unsigned action = rng.below(kind == 2 ? 2 : 6);
    if (kind == 2 || (kind == 3 && action == 5)) {
      // block_on a unit: its value, or its exception
      const std::uint64_t id = s->new_id();
      if (id != k_none) {
        bool ok = false;
        try {
          ok = s->pool->block_on(unit(s, id, 1, true)) == s->value_of(id) && !s->throws(id, true);
        } catch (const unit_error& e) {
          ok = s->throws(id, true) && e.id == id;
        }
        if (!ok)
          block_on_errors->fetch_add(1, std::memory_order_relaxed);
      }
    } else if (action == 0 || action == 1) {
      if (sub && action == 1) {
        const std::uint64_t id = s->new_id();
        if (id != k_none) {
          s->posts.fetch_add(1, std::memory_order_relaxed);
          sub->post([s, id] {
            s->ran_once(id);
            s->finished();
          });
        }
      } else {
        post_unit(s);
      }
    } else if (action == 2) {
      const std::uint64_t id = s->new_id();
      if (id != k_none) {
        if (sub)
          (void)sub->spawn(unit(s, id, 1, false));
        else
          (void)s->pool->spawn(unit(s, id, 1, false));
      }
    } else if (action == 3) {
      const std::uint64_t id = s->new_id();
      if (id != k_none)
        held.push_back({sub ? sub->spawn(unit(s, id, 1, true)) : s->pool->spawn(unit(s, id, 1, true)), id});
      if (held.size() >= 64) {
        s->pool->block_on(join_all_checked(s, std::move(held)));
        held.clear();
      }
    } else if (action == 4) {
      // pause 0-100 us now and then, so the workers go idle and park between bursts
      if (rng.below(kind == 3 ? 2 : 16) == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(rng.below(101)));
    }
  }
  if (!held.empty())
    s->pool->block_on(join_all_checked(s, std::move(held)));
}

struct stress_config {
  pool_mode mode;
  unsigned threads;
};

std::string config_name(const ::testing::TestParamInfo<stress_config>& info) {
  return std::string(info.param.mode == pool_mode::io ? "io_" : "cpu_bound_") + std::to_string(info.param.threads);
}

class sched_stress : public ::testing::TestWithParam<stress_config> {
 protected:
  void SetUp() override {
    if (GetParam().mode == pool_mode::io && !io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};

INSTANTIATE_TEST_SUITE_P(modes, sched_stress,
                         ::testing::Values(stress_config{pool_mode::io, 1}, stress_config{pool_mode::io, 2},
                                           stress_config{pool_mode::io, 4}, stress_config{pool_mode::cpu_bound, 1},
                                           stress_config{pool_mode::cpu_bound, 2},
                                           stress_config{pool_mode::cpu_bound, 4}),
                         config_name);

TEST_P(sched_stress, random_spawn_join_yield_sleep_post) {
  const std::uint64_t base_seed = env_u64("SATURN_STRESS_SEED", 20240601);
  const double total_seconds = env_double("SATURN_STRESS_SECONDS", 6.0);
  const stress_config cfg = GetParam();
  const std::uint64_t seed = mix(base_seed * 8 + (cfg.mode == pool_mode::io ? 0 : 4) + cfg.threads);
  const auto run_for = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(total_seconds / 6.0));
  std::printf("[ stress   ] SATURN_STRESS_SEED=%llu (this configuration: %llu), %.2f s\n",
              static_cast<unsigned long long>(base_seed), static_cast<unsigned long long>(seed),
              std::chrono::duration<double>(run_for).count());
  SCOPED_TRACE("SATURN_STRESS_SEED=" + std::to_string(base_seed));

  auto s = std::make_unique<stress_state>();
  s->io = cfg.mode == pool_mode::io;
  s->seed = seed;
  std::atomic<std::uint64_t> block_on_errors{0};
  {
    pool_options o;
    o.threads = cfg.threads;
    o.mode = cfg.mode;
    thread_pool pool(o);
    s->pool = &pool;
    const auto until = std::chrono::steady_clock::now() + run_for;
    std::vector<std::thread> ext;
    for (int k = 0; k < 4; ++k)
      ext.emplace_back(external, s.get(), k, seed + 1000 + static_cast<std::uint64_t>(k), until, &block_on_errors);
    for (auto& t : ext)
      t.join();
    // drain: nothing new is created; everything created must finish
    s->draining.store(true);
    const auto drain_until = std::chrono::steady_clock::now() + 30s * k_slow;
    while (s->outstanding.load() != 0 && std::chrono::steady_clock::now() < drain_until)
      std::this_thread::sleep_for(1ms);
    ASSERT_EQ(s->outstanding.load(), 0) << "work created but never finished (lost wake-up or lost task); "
                                        << s->next_id.load() << " units created";
  }
  const std::uint64_t n = std::min(s->next_id.load(), stress_state::k_capacity);
  std::uint64_t bad = 0, made = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const unsigned m = s->made[i].load(), r = s->ran[i].load();
    made += m;
    if (m != r) {
      if (bad < 5)
        ADD_FAILURE() << "unit " << i << " was made " << m << " times and ran " << r << " times";
      ++bad;
    }
  }
  std::printf("[ stress   ] units %llu, joins %llu (exceptions %llu), inline awaits %llu, posts %llu, sleeps %llu, "
              "blocking %llu\n",
              static_cast<unsigned long long>(made), static_cast<unsigned long long>(s->joins.load()),
              static_cast<unsigned long long>(s->exceptions.load()),
              static_cast<unsigned long long>(s->inline_awaits.load()), static_cast<unsigned long long>(s->posts.load()),
              static_cast<unsigned long long>(s->sleeps.load()),
              static_cast<unsigned long long>(s->blocking_calls.load()));
  EXPECT_EQ(bad, 0u) << "units not run exactly once";
  EXPECT_GT(made, 1000u) << "the stress did too little to mean anything";
  EXPECT_GT(s->joins.load(), 0u);
  EXPECT_EQ(s->join_errors.load(), 0u) << "joins that returned the wrong value or exception";
  EXPECT_EQ(block_on_errors.load(), 0u) << "block_on calls that returned the wrong value or exception";
  EXPECT_EQ(s->sleep_errors.load(), 0u) << "sleeps that failed or ended early";
  EXPECT_EQ(s->blocking_errors.load(), 0u) << "spawn_blocking calls with the wrong outcome";
}

}  // namespace
