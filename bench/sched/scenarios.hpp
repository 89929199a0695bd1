// The sched suite's scenario table and the state one sample's tasks share
// (docs/workloads.md, "sched"; the same harness shape as the peers' sched programs).
#pragma once

#include <saturn/sched/thread_pool.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "harness.hpp"

namespace sched_bench {

enum class work_kind { noop, spin, mixed };

/// A task's body: nothing, a busy loop of `ns`, or (mixed) 1 ms for i % 5 == 0.
struct work {
  work_kind kind;
  std::int64_t ns;
};

enum class shape {
  flat,    ///< `submitters` external threads, tasks / submitters leaves each
  nested,  ///< one external submitter posts `parents`; each posts `children` from its worker
  burst,   ///< `half` leaves, drain, sleep `gap_ns`, `half` more, drain
};

struct scenario {
  const char* name;
  int tasks;
  shape shp;
  int submitters;      // flat
  int parents;         // nested
  int children;        // nested
  int half;            // burst
  std::int64_t gap_ns; // burst
  work body;
};

inline constexpr std::int64_t k_us = 1000;

inline const std::vector<scenario>& scenarios() {
  static const std::vector<scenario> all = {
      {"flood_1m", 1'000'000, shape::flat, 1, 0, 0, 0, 0, {work_kind::noop, 0}},
      {"contended_spawn_8x", 100'000, shape::flat, 8, 0, 0, 0, 0, {work_kind::noop, 0}},
      {"cpu_work_10us", 10'000, shape::flat, 1, 0, 0, 0, 0, {work_kind::spin, 10 * k_us}},
      {"cpu_work_100us", 2'000, shape::flat, 1, 0, 0, 0, 0, {work_kind::spin, 100 * k_us}},
      {"contended_cpu_10us", 10'000, shape::flat, 4, 0, 0, 0, 0, {work_kind::spin, 10 * k_us}},
      {"nested_fanout_4x", 10'000, shape::nested, 1, 2'000, 4, 0, 0, {work_kind::noop, 0}},
      {"burst_drain_burst", 4'000, shape::burst, 1, 0, 0, 2'000, 10'000 * k_us, {work_kind::spin, 50 * k_us}},
      {"mixed_fast_slow", 5'000, shape::flat, 1, 0, 0, 0, 0, {work_kind::mixed, 0}},
  };
  return all;
}

/// A hot counter alone on its cache lines (128: adjacent-line prefetch pairs lines).
struct alignas(128) padded_counter {
  std::atomic<std::int64_t> v{0};
};

/// Completion latch: the task that brings `remaining` to zero stamps the end time and
/// wakes the waiting submitter (mutex + condvar, as every peer).
struct completion_latch {
  padded_counter remaining;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::int64_t end_ns = 0;

  /// Submitter thread, before the first submit of a phase.
  void reset(std::int64_t n) {
    std::lock_guard g(mu);
    done = false;
    remaining.v.store(n, std::memory_order_release);
  }
  /// Any worker, once per task.
  void count_down() {
    // ordering: acq_rel so the last task sees every other task's latency store.
    if (remaining.v.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      const std::int64_t t = bench::now_ns();
      {
        std::lock_guard g(mu);
        end_ns = t;
        done = true;
      }
      cv.notify_all();
    }
  }
  /// Submitter thread; blocks until the latch reached zero, returns the end time.
  std::int64_t wait() {
    std::unique_lock g(mu);
    cv.wait(g, [&] { return done; });
    return end_ns;
  }
};

/// How external threads hand tasks to the pool.
enum class submit_path {
  submitter,  ///< thread_pool::register_submitter(), one per submitter thread (default)
  inject,     ///< thread_pool::post() from outside: the global injection queue
};

/// State shared by every task of a sample; tasks reach it through a plain pointer.
struct shared_state {
  padded_counter hits;
  completion_latch latch;
  std::vector<std::int64_t> lat;  // ns; task i writes slot i only
  saturn::thread_pool* pool = nullptr;
  submit_path path = submit_path::submitter;

  /// The task's epilogue: its latency, then the latch.
  void finish(int i, std::int64_t submitted) {
    lat[static_cast<std::size_t>(i)] = bench::now_ns() - submitted;
    latch.count_down();
  }
};

struct sample {
  double wall_s = 0;
  std::vector<std::int64_t> lat;
  std::int64_t checksum = 0;
};

/// Runs one sample of `sc` on `s->pool` from the calling (external) thread.
sample run_sample(shared_state* s, const scenario& sc);

}  // namespace sched_bench
