// Shared by the thread_pool test files: pool configurations (both modes, 1/2/4 workers),
// the value oracle (splitmix64), run-exactly-once flags, polling waits, and the io_uring
// probe that makes io-mode tests skip (with the reason) where the ring is unavailable.
#pragma once

#include "support/wait.hpp"
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace saturn_test {


using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::pool_mode;
using saturn::pool_options;
using saturn::task;
using saturn::thread_pool;

#if defined(SATURN_TSAN) || defined(SATURN_ASAN)
inline constexpr int k_slow = 4;  // sanitizer builds: more generous deadlines, smaller volumes
#else
inline constexpr int k_slow = 1;
#endif

struct pool_config {
  pool_mode mode;
  unsigned threads;
};

inline std::string config_name(const ::testing::TestParamInfo<pool_config>& info) {
  return std::string(info.param.mode == pool_mode::io ? "io_" : "cpu_bound_") + std::to_string(info.param.threads);
}

inline pool_options options_for(const pool_config& c) {
  pool_options o;
  o.threads = c.threads;
  o.mode = c.mode;
  return o;
}

/// splitmix64's finalizer: the value oracle of every task.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

using flags = std::unique_ptr<std::atomic<std::uint32_t>[]>;
inline flags make_flags(std::size_t n) { return flags(new std::atomic<std::uint32_t>[n]()); }

/// Expects every flag in [0, n) to be exactly 1; reports the first few that are not.
inline void expect_each_once(const flags& f, std::size_t n, const char* what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = f[i].load();
    if (v != 1) {
      if (bad < 5)
        ADD_FAILURE() << what << " #" << i << " ran " << v << " times (expected exactly once)";
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": items not run exactly once";
}


inline int os_tid() { return static_cast<int>(::gettid()); }

/// Empty when io_uring works here; otherwise why not (tests needing it are then skipped).
inline const std::string& io_uring_unavailable() {
  static const std::string why = [] {
    std::string err;
    std::thread([&err] {
      try {
        saturn::event_loop probe_loop;
      } catch (const std::exception& e) {
        err = e.what();
        if (err.empty())
          err = "event_loop construction failed";
      }
    }).join();
    return err;
  }();
  return why;
}

/// A leaf task: marks its run flag, sometimes yields, returns mix(i).
inline task<std::uint64_t> leaf(std::uint64_t i, std::atomic<std::uint32_t>* ran, bool suspend) {
  ran[i].fetch_add(1, std::memory_order_relaxed);
  if (suspend)
    co_await saturn::yield();  // joined while still running, sometimes
  co_return mix(i);
}

/// Spawns n leaves (half through pool->spawn, half through spawn_in) and sums their joins.
inline task<std::uint64_t> fan_out(thread_pool* pool, std::uint64_t n, std::atomic<std::uint32_t>* ran) {
  std::vector<join_handle<std::uint64_t>> hs;
  hs.reserve(n);
  saturn::task_context& ctx = co_await saturn::this_task::context();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 2 == 0)
      hs.push_back(pool->spawn(leaf(i, ran, i % 3 == 0)));
    else
      hs.push_back(saturn::spawn_in(ctx.sched->root_context(), leaf(i, ran, i % 3 == 0)));
  }
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 2 == 0)
      sum += co_await std::move(hs[i]);
    else
      sum += co_await hs[i];  // the lvalue form
  }
  co_return sum;
}

/// Base fixture: skips io-mode parameters when io_uring is unusable.
class pool_test_base : public ::testing::TestWithParam<pool_config> {
 protected:
  void SetUp() override {
    if (GetParam().mode == pool_mode::io && !io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};

inline auto all_pool_configs() {
  return ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2}, pool_config{pool_mode::io, 4},
                          pool_config{pool_mode::cpu_bound, 1}, pool_config{pool_mode::cpu_bound, 2},
                          pool_config{pool_mode::cpu_bound, 4});
}

}  // namespace saturn_test

/// Declares fixture NAME over every pool configuration (both modes, 1/2/4 workers).
#define SATURN_POOL_TEST_SUITE(NAME)                                                   \
  class NAME : public ::saturn_test::pool_test_base {};                                \
  INSTANTIATE_TEST_SUITE_P(modes, NAME, ::saturn_test::all_pool_configs(), ::saturn_test::config_name)
