/// \file
/// The stall detector: a watchdog thread that notices a worker running one task step (or
/// one turn of its event loop's callbacks) for longer than a threshold without returning
/// to its loop, and reports it once: which pool and worker, how long it has held the
/// worker, and the spawn site of the task when it is a spawned task.
///
/// ```cpp
/// saturn::stall_detector watchdog;  // 10 ms threshold, reports to stderr
/// // ... run the pools ...
/// ```
///
/// How: each worker bumps a progress word before and after every run (odd while inside
/// one: two plain stores, no atomic read-modify-write, no clock read). The watchdog wakes
/// every `period`, reads each worker's word, and a worker whose word stayed odd and
/// unchanged for `threshold` is stalled. Nothing is sent to the worker (no signal, no
/// wake-up): sleeping workers stay asleep. A stall is reported between `threshold` and
/// `threshold + period` after it began. Every report adds one to the worker's
/// worker_stats::stalls (saturn_worker_stalls_total in the metrics).
///
/// Preemption: time the kernel kept the worker's thread runnable but off the CPU (a
/// machine with more runnable threads than CPUs) does not count towards the threshold:
/// for a run it sees in more than one sample, the watchdog counts the thread's CPU time
/// (/proc/self/task/TID/schedstat) and the samples in which it was blocked in the kernel
/// (/proc/self/task/TID/stat), one pread each of files it keeps open. Time blocked in a
/// system call does count: it holds the worker as surely as computing does.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <saturn/detail/spawn_site.hpp>
#include <string>

namespace saturn {

/// One stall.
struct stall_report {
  unsigned pool = 0;            ///< pool_stats::id of the worker's pool
  unsigned worker = 0;          ///< the worker's index in its pool
  std::uint64_t held_ns = 0;    ///< how long it has run without returning (at least; sampled)
  /// Of held_ns, how long the worker's thread was runnable but waiting for a CPU
  /// (held_ns less its CPU time and sampled blocked time; 0 where the kernel does not
  /// say). Not counted against the threshold.
  std::uint64_t preempted_ns = 0;
  const void* runnable = nullptr;  ///< what it runs; null: its event loop's callbacks (I/O completions, timers)
  const void* task = nullptr;   ///< the spawned task's frame, when `runnable` is one (else null)
  bool has_site = false;        ///< `site` is known
  saturn::spawn_site site{};  ///< where that task was spawned
};

/// One line of text for a report, such as "saturn: stall: pool 0 worker 1 has run one
/// task for 52.1 ms without returning to its loop (task 0x55d0 spawned at a.cpp:12 (f))".
std::string describe(const stall_report& r);

/// The detector's settings.
struct stall_options {
  /// A run longer than this is a stall.
  std::chrono::nanoseconds threshold = std::chrono::milliseconds(10);
  /// How often the watchdog looks; 0: threshold / 4, between 1 ms and 25 ms.
  std::chrono::nanoseconds period{0};
  /// Called on the watchdog thread for each stall (must not block for long; must not
  /// build or destroy a pool). Empty: describe(report) is written to stderr.
  std::function<void(const stall_report&)> on_stall;
};

/// Runs the watchdog while it lives. Threading: construct and destroy on any thread but
/// not on a worker of a pool it watches (the destructor joins the watchdog); watches every
/// thread_pool alive, including pools built later. Several detectors may coexist (each
/// reports on its own; the stalls counter then counts each report).
class stall_detector {
 public:
  explicit stall_detector(stall_options opts = {});
  ~stall_detector();
  stall_detector(const stall_detector&) = delete;
  stall_detector& operator=(const stall_detector&) = delete;

  /// Stalls reported so far. Any thread.
  std::uint64_t reported() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> m_state;
};

}  // namespace saturn
