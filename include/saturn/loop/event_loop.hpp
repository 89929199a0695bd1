/// \file
/// `event_loop`: one io_uring-backed proactor per thread — the engine under every tier.
///
/// One iteration (run_once) does, in order:
///   1. move work handed over by other threads (the remote queue) to the ready queue;
///   2. run the runnables that were ready when the iteration began (later posts wait for
///      the next iteration, so I/O completions are never starved);
///   3. fire due timers (one clock read, only when timers exist);
///   4. one non-waiting io_uring_enter that submits every pending SQE and collects what
///      completed, reaping all CQEs in one batch and calling each operation's completion
///      directly;
///   5. only if that brought nothing and nothing is ready: sleep in the kernel until a CQE
///      arrives or the nearest timer is due — after announcing the sleep and re-checking
///      the remote queue (see "wake protocol" in src/loop/wake.cpp).
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/detail/owned_counter.hpp>
#include <saturn/loop/clock.hpp>
#include <saturn/loop/detail/op_pool.hpp>
#include <saturn/loop/detail/remote_queue.hpp>
#include <saturn/loop/detail/timer_heap.hpp>
#include <saturn/loop/runnable.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace saturn {

namespace ring {
class uring;
}

// The implementer part of the loop (saturn/ext/): the raw ring operations, the
// operation node, provided-buffer rings, exit hooks and the operation pool.
struct operation;
struct loop_exit_hook;
class buf_ring;
namespace detail {
struct loop_internals;
}

/// How to build a loop.
struct loop_options {
  unsigned entries = 256;     ///< submission queue depth
  unsigned cq_entries = 0;    ///< completion queue depth; 0 = 4 × entries
  bool defer_taskrun = true;  ///< use IORING_SETUP_DEFER_TASKRUN when the kernel has it
  /// Buffers the loop's receive buf_ring starts with (power of two). The kernel hands them
  /// out in ring order, so all of them cycle through the cache: count x size is the
  /// receive path's cache footprint. Enough for the receives outstanding at once, no more.
  unsigned recv_buffer_count = 1024;
  unsigned recv_buffer_size = 16384;   ///< bytes per receive buffer
  /// Most buffers the receive ring grows to (power of two, <= 32768 and <= 64 x
  /// recv_buffer_count): when receives find it empty while all its buffers are out (more
  /// connections receiving at once than buffers), it adds recv_buffer_count more.
  unsigned recv_buffer_max = 8192;
  /// How long before its nearest timer's deadline the loop stops sleeping in the kernel
  /// and polls instead. Waking a sleeping (halted) CPU can take long on a VM, so a timer
  /// slept for until its deadline fires that much late; waking this much early and polling
  /// the rest fires it nearly on time, for at most this much CPU per sleep that a timer
  /// ends (docs/decisions/timers.md). 0: sleep until the deadline.
  std::chrono::nanoseconds timer_spin{50'000};
};

/// Counters for tests and diagnostics. Read on the loop thread.
/// Threading: written by the loop's thread only (each field an owned_counter: a plain add,
/// no read-modify-write); any thread may read them, which is how metrics collects them.
struct loop_stats {
  detail::owned_counter enters;          ///< io_uring_enter calls made by run_once
  detail::owned_counter completions;     ///< CQEs dispatched to operations (counted per reaped batch)
  detail::owned_counter remote_wakes;    ///< wake-ups sent to this loop by other threads
  detail::owned_counter sqes_submitted;  ///< SQEs the kernel took (the sum of the enters' results)
  detail::owned_counter sq_full;         ///< submissions that found the SQ full and flushed it first
  detail::owned_counter cq_overflows;    ///< reaps that found completions kept aside (CQ overflow)
  detail::owned_counter timers_armed;    ///< add_timer calls (loop-kept timers)
  detail::owned_counter timers_fired;    ///< loop-kept timers that expired and fired
};

/// A per-thread proactor over one io_uring.
///
/// Threading: a loop belongs to the thread that constructed it (the ring is
/// SINGLE_ISSUER). Every member must be called on that thread except `post_remote`,
/// `stop` and `wake`, which any thread may call. Not copyable or movable.
///
/// Errors: construction throws std::system_error whose message names the cause and the
/// fix when io_uring cannot be set up. Operation failures are never thrown: they reach
/// the operation's completion as `res = -errno`.
///
/// This header is the loop's user part: running it, posting work, timers, stats and the
/// callback tier (defined in saturn/loop/callbacks.hpp). Code that submits ring
/// operations itself uses the implementer part, saturn/ext/ (ext::submit_read(loop, ...)).
class event_loop {
 public:
  /// Sets the ring up on the calling thread and makes this the thread's current loop.
  explicit event_loop(const loop_options& opts = {});
  /// Cancels every in-flight operation and waits for its CQE (completions are delivered,
  /// with -ECANCELED where the cancel won), so the kernel writes no buffer after this
  /// returns. Queued runnables and armed timers are discarded (run_mode::discard).
  /// After the ring is closed the kernel interrupts this thread once, some milliseconds
  /// later (io_uring's exit work removes the thread's ring context with a task_work sent
  /// as TWA_SIGNAL; raw liburing does the same). Calls the kernel restarts do not notice;
  /// a blocking call it cannot restart (a socket receive with SO_RCVTIMEO, poll,
  /// epoll_wait, select) made on this thread in that window fails once with EINTR:
  /// retry it.
  ~event_loop();
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  /// The loop owned by the calling thread, or nullptr.
  static event_loop* current() noexcept;

  // ---- timers kept in the loop (no kernel object per timer)
  /// Fires the timers whose deadline has passed, without entering the ring. For a
  /// scheduler that runs many tasks between two loop iterations (thread_pool workers call
  /// it every few tasks), so a timer is not late by a whole batch of tasks. Costs a clock
  /// read when a timer is armed, nothing otherwise. Loop thread only.
  void fire_due_timers() noexcept {
    if (!m_timers.empty() && m_timers.top()->m_deadline <= clock::now())
      fire_timers();
  }
  /// Arms `t` to fire at or after `deadline`. `t` must not be armed already.
  void add_timer(timer_node* t, clock::time_point deadline) {
    t->m_deadline = deadline;
    ++m_stats.timers_armed;
    m_timers.push(t);
  }
  /// Disarms `t`. Returns false if it was not armed (already fired or never armed).
  bool cancel_timer(timer_node* t) noexcept { return m_timers.erase(t); }
  /// Number of armed timers.
  std::size_t timer_count() const noexcept { return m_timers.size(); }
  /// The nearest armed timer's deadline; clock::time_point::max() when none is armed.
  /// Loop thread only (a simulated thread_pool reads it to know how far virtual time may
  /// jump while every worker is idle).
  clock::time_point next_timer_deadline() const noexcept {
    return m_timers.empty() ? clock::time_point::max() : m_timers.top()->m_deadline;
  }

  // ---- ready work
  /// Queues `r` to run on this loop (FIFO). Loop thread only. Allocates nothing.
  void post(runnable* r) noexcept { m_ready.push(r); }
  /// Queues `r` from any thread and wakes the loop if it sleeps (an eventfd write, or a
  /// MSG_RING when the caller runs a loop of its own). Lock-free.
  void post_remote(runnable* r) noexcept;
  /// Wakes the loop if it is sleeping in the kernel. Any thread.
  void wake() noexcept;

  // ---- running
  /// Runs until stop() is called or no work remains (nothing ready, in flight, or armed,
  /// and no keep_alive held). Loop thread only.
  void run();
  /// Runs one iteration; sleeps in the kernel only when `may_block` and nothing is ready.
  /// Returns true while work remains.
  bool run_once(bool may_block = true);
  /// Makes run() return after the current iteration. Any thread.
  void stop() noexcept;
  /// Cancels every in-flight operation and waits for its CQE (completions are delivered),
  /// then discards queued runnables and armed timers (run_mode::discard). The loop stays
  /// usable. Loop thread only; the destructor calls it.
  void shutdown() noexcept;
  /// The first half of shutdown(): cancels every in-flight operation and waits for its
  /// CQE; completions are delivered and whatever they queue stays queued. Loop thread only.
  void drain_io() noexcept;
  /// Discards (run_mode::discard) every queued runnable and every armed timer. Any thread
  /// while the loop's own thread is not running it (used by schedulers at shutdown).
  void discard_all() noexcept;
  /// Makes the current or next sleep of the loop return at once (a wake token, not a
  /// queue entry: many notifies before a sleep collapse into one). Any thread.
  void notify() noexcept;
  /// Loop thread only, from inside run_once (a completion, timer or posted runnable):
  /// this turn must not end in a blocking wait, because work was queued where the loop
  /// cannot see it (a scheduler's own queues). Cleared at the start of every run_once.
  void stay_awake() noexcept { m_stay_awake = true; }
  /// True once stop() was called (cleared by run()).
  bool stop_requested() const noexcept { return m_stop.load(std::memory_order_relaxed); }
  /// Keeps run() from returning while no work is visible (e.g. while other threads may
  /// still post). Balanced by release_keep_alive(). Loop thread only.
  void add_keep_alive() noexcept { ++m_keep_alive; }
  void release_keep_alive() noexcept { --m_keep_alive; }
  /// True when there is anything to do or wait for.
  bool has_work() const noexcept;

  /// Operations submitted and not yet completed (excluding the loop's internal ones).
  std::size_t in_flight() const noexcept { return m_in_flight; }
  const loop_stats& stats() const noexcept { return m_stats; }
  /// The ring's real fd (for MSG_RING hand-offs).
  int ring_fd() const noexcept;
  /// True when the ring runs with DEFER_TASKRUN.
  bool defer_taskrun() const noexcept;
  /// Submission queue depth.
  unsigned sq_entries() const noexcept;

  // ---- tier A: callbacks (defined in saturn/loop/callbacks.hpp, which this header
  //      includes at its end). Each returns a handle usable with cancel() while in flight.
  //      Threading: loop thread only, except defer_remote (any thread). None blocks; each
  //      callable runs later on the loop thread, never inside the call that queued it.
  /// Identifies an in-flight callback operation for cancel(). Dangling after completion.
  struct op_handle {
    const operation* op = nullptr;
  };
  template <class F> op_handle nop(F&& fn);
  template <class F> op_handle read(int fd, void* buf, unsigned len, std::uint64_t offset, F&& fn);
  template <class F> op_handle write(int fd, const void* buf, unsigned len, std::uint64_t offset, F&& fn);
  template <class F>
  op_handle read_fixed(int fd, void* buf, unsigned len, std::uint64_t offset, unsigned buf_index, F&& fn);
  template <class F>
  op_handle write_fixed(int fd, const void* buf, unsigned len, std::uint64_t offset, unsigned buf_index, F&& fn);
  /// A kernel timeout; fn(res) gets 0 when it expired, -ECANCELED when cancelled.
  template <class F> op_handle timeout(std::chrono::nanoseconds d, F&& fn);
  /// A read with a deadline: fn(res) gets -ECANCELED when the deadline passed first.
  template <class F>
  op_handle read_with_timeout(int fd, void* buf, unsigned len, std::uint64_t offset, std::chrono::nanoseconds d,
                              F&& fn);
  /// Cancels `h`; fn(res): 0 cancelled, -ENOENT already completed, -EALREADY running.
  template <class F> void cancel(op_handle h, F&& fn);
  /// Names a timer armed by after(); stays safe to use after the timer fired.
  struct timer_handle {
    timer_node* node = nullptr;
    std::uint64_t seq = 0;
  };
  /// Calls fn() on the loop thread after `d` (a loop timer, no kernel object). The
  /// returned handle disarms it with cancel_after().
  template <class F> timer_handle after(std::chrono::nanoseconds d, F&& fn);
  /// Disarms and frees a timer armed by after(); false if it already fired or was
  /// cancelled (the handle is checked, so a stale one touches no other timer).
  bool cancel_after(timer_handle h) noexcept;
  /// Calls fn() on the loop thread in a later iteration.
  template <class F> void defer(F&& fn);
  /// Calls fn() on the loop thread; callable from any thread (allocates with new).
  template <class F> void defer_remote(F&& fn);

 private:
  friend struct loop_access;  // tests' white-box peeks
  friend struct detail::loop_internals;
  void run_ready() noexcept;
  void drain_remote() noexcept;
  void fire_timers() noexcept;
  unsigned reap() noexcept;
  void dispatch(std::uint64_t user_data, int res, unsigned flags) noexcept;
  void arm_wake_read();
  void discard_queued() noexcept;
  void poll();
  void sleep();
  static void check_enter(int r);
  /// check_enter, after adding an enter's submitted count (r > 0) to the stats.
  void count_submitted(int r);

  std::unique_ptr<ring::uring> m_ring;
  // lifetime: declared after m_ring, so destroyed (unregistered) before the ring goes.
  std::unique_ptr<buf_ring> m_recv_buffers;
  unsigned m_recv_buffer_count = 1024;
  unsigned m_recv_buffer_size = 16384;
  unsigned m_recv_buffer_max = 8192;
  loop_exit_hook* m_exit_hooks = nullptr;
  detail::runnable_fifo m_ready;
  detail::timer_heap m_timers;
  std::size_t m_in_flight = 0;
  std::size_t m_keep_alive = 0;
  loop_stats m_stats;
  detail::op_pool m_pool;
  std::uint64_t m_timer_seq = 0;
  int m_wake_fd = -1;
  bool m_wake_armed = false;
  bool m_stay_awake = false;  // loop thread only: see stay_awake()
  std::int64_t m_timer_spin_ns = 0;  // loop_options::timer_spin
  std::uint64_t m_wake_buf = 0;
  event_loop* m_prev_current = nullptr;
  detail::atomic<bool> m_stop{false};
  detail::atomic<bool> m_notified{false};
  detail::remote_queue m_remote;
  // ordering: seq_cst with the remote queue's head (Dekker): the loop stores true then
  // re-reads the queue; a producer pushes then reads this flag. One of them sees the other.
  alignas(64) detail::atomic<bool> m_sleeping{false};
  /// Other threads between pushing onto m_remote (or setting m_stop) and the end of their
  /// wake(): the loop may be destroyed as soon as its thread took what they pushed (the
  /// last task of a block_on), so ~event_loop waits until none is left.
  detail::atomic<std::uint32_t> m_remote_posters{0};
};

namespace detail {
/// The one door to the loop's private state for its implementer part: the inline
/// functions of saturn/ext/ (exit hooks, the operation pool), the callback tier and the
/// out-of-line ring operations in src/loop. Not for use elsewhere. Threading: the loop's
/// thread, like everything it reaches.
struct loop_internals {
  static ring::uring& ring(const event_loop& l) noexcept { return *l.m_ring; }
  static std::size_t& in_flight(event_loop& l) noexcept { return l.m_in_flight; }
  static loop_stats& stats(event_loop& l) noexcept { return l.m_stats; }
  static op_pool& pool(event_loop& l) noexcept { return l.m_pool; }
  static loop_exit_hook*& exit_hooks(event_loop& l) noexcept { return l.m_exit_hooks; }
  /// The receive buffer ring and the sizes it is (re)made with.
  static std::unique_ptr<buf_ring>& recv_ring(event_loop& l) noexcept { return l.m_recv_buffers; }
  static unsigned& recv_buffer_count(event_loop& l) noexcept { return l.m_recv_buffer_count; }
  static unsigned& recv_buffer_size(event_loop& l) noexcept { return l.m_recv_buffer_size; }
  static unsigned& recv_buffer_max(event_loop& l) noexcept { return l.m_recv_buffer_max; }
};
}  // namespace detail

}  // namespace saturn

#include <saturn/loop/callbacks.hpp>
