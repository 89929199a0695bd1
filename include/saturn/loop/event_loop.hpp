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
#include <saturn/loop/buf_ring.hpp>
#include <saturn/loop/detail/op_pool.hpp>
#include <saturn/loop/detail/remote_queue.hpp>
#include <saturn/loop/detail/timer_heap.hpp>
#include <saturn/loop/operation.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>

struct statx;
struct open_how;

namespace saturn {

namespace ring {
class uring;
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

/// Something that must let go of a loop when the loop is destroyed (e.g. a socket's
/// multishot receive living on it). Intrusive; registered and removed on the loop thread.
struct loop_exit_hook {
  using fn_type = void (*)(loop_exit_hook* self) noexcept;
  loop_exit_hook* m_prev_hook = nullptr;
  loop_exit_hook* m_next_hook = nullptr;
  fn_type m_on_loop_exit = nullptr;
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

  // ---- operations: the caller owns `op` and every buffer until op->m_complete runs.
  /// IORING_OP_NOP; completes with 0.
  void submit_nop(operation* op);
  /// read(2) at `offset` (-1: the file position). Completes with bytes read or -errno.
  void submit_read(operation* op, int fd, void* buf, unsigned len, std::uint64_t offset);
  /// write(2) at `offset` (-1: the file position).
  void submit_write(operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset);
  /// Read into registered buffer `buf_index` (see register_buffers); `buf` must lie inside it.
  void submit_read_fixed(operation* op, int fd, void* buf, unsigned len, std::uint64_t offset, unsigned buf_index);
  /// Write from registered buffer `buf_index`.
  void submit_write_fixed(operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset,
                          unsigned buf_index);
  /// readv(2)/writev(2); `iov` must stay alive until completion.
  void submit_readv(operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset);
  void submit_writev(operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset);
  /// A kernel timeout (IORING_OP_TIMEOUT). `ts` must stay alive until completion.
  /// Completes with -ETIME on expiry (normal), -ECANCELED when cancelled.
  void submit_timeout(operation* op, const kernel_timespec* ts, bool absolute = false);
  /// A one-shot IORING_OP_POLL_ADD: completes with the ready events (a POLLIN/POLLOUT/...
  /// mask, POLLHUP and POLLERR included whatever `events` asks) once `fd` has one of
  /// `events`, or -errno. For descriptors whose own library reads them (c-ares's sockets)
  /// and for pidfds (POLLIN: the child exited).
  void submit_poll(operation* op, int fd, unsigned events);
  /// waitid(2) as a ring operation (IORING_OP_WAITID, Linux >= 6.7; see supports_waitid):
  /// completes with 0 once a child matching `idtype`/`id` (P_PIDFD and a pidfd, P_PID, ...)
  /// has changed state per `options` (WEXITED, ...; WNOHANG makes it return at once), with
  /// `*info` filled in as waitid(2) fills it — the child is reaped unless WNOWAIT — or
  /// -errno (-ECHILD: no such child of this process, -ECANCELED). `info` must stay alive
  /// until completion. A kernel without the opcode completes it with -EINVAL.
  void submit_waitid(operation* op, int idtype, int id, ::siginfo_t* info, int options);
  /// True when the ring has IORING_OP_WAITID (probed at setup).
  bool supports_waitid() const noexcept;
  /// IORING_OP_ASYNC_CANCEL of `target`. `op` (may be null: result ignored) completes with
  /// 0 (target cancelled: it completes with -ECANCELED), -ENOENT (target already completed
  /// or unknown) or -EALREADY (target is running and may still complete normally).
  void submit_cancel(const operation* target, operation* op = nullptr);
  /// Links a timeout to the operation submitted just before (IOSQE_IO_LINK +
  /// IORING_OP_LINK_TIMEOUT): if it has not completed by `ts`, it is cancelled (its result
  /// is -ECANCELED). `op` (may be null) completes with -ETIME if the timeout fired, else
  /// -ECANCELED. Must directly follow a submit_* call on this loop.
  void link_timeout(const kernel_timespec* ts, operation* op = nullptr);
  // ---- socket operations (src/loop/submit_net.cpp): socket, accept, connect, recv, send,
  //      send_zc, sendmsg/recvmsg, shutdown, provided-buffer rings.
  /// socket(2). Completes with the new fd or -errno.
  void submit_socket(operation* op, int domain, int type, int protocol);
  /// accept4(2) on listening socket `fd` (`addr`/`len` may be null). With `multishot` the
  /// operation stays armed: one CQE per accepted fd while IORING_CQE_F_MORE is set; an
  /// error ends it (the final CQE lacks F_MORE).
  void submit_accept(operation* op, int fd, ::sockaddr* addr, ::socklen_t* len, int flags, bool multishot);
  /// connect(2); `addr` must stay alive until completion. Completes with 0 or -errno.
  void submit_connect(operation* op, int fd, const ::sockaddr* addr, ::socklen_t len);
  /// recv(2) into `buf`. Completes with the byte count (0: EOF) or -errno.
  void submit_recv(operation* op, int fd, void* buf, unsigned len, int flags);
  /// recv(2) into a buffer the kernel picks from buf_ring group `group`: the CQE carries
  /// IORING_CQE_F_BUFFER and the buffer id (flags >> cqe_buffer_shift). With `multishot`
  /// one CQE per arrival while F_MORE is set; -ENOBUFS (ring empty) ends it. `poll_first`
  /// waits for data before picking a buffer (use when re-arming after -ENOBUFS).
  void submit_recv_provided(operation* op, int fd, std::uint16_t group, bool multishot, bool poll_first);
  /// send(2) of `buf`. Completes with the byte count or -errno (MSG_NOSIGNAL is added).
  void submit_send(operation* op, int fd, const void* buf, unsigned len, int flags);
  /// Zero-copy send (IORING_OP_SEND_ZC): a first CQE with the byte count and F_MORE, then a
  /// notification CQE (cqe_f_notif) once the kernel no longer reads `buf`.
  void submit_send_zc(operation* op, int fd, const void* buf, unsigned len, int flags);
  /// sendmsg(2)/recvmsg(2); `msg` and everything it points at must stay alive until completion.
  void submit_sendmsg(operation* op, int fd, const ::msghdr* msg, int flags);
  void submit_recvmsg(operation* op, int fd, ::msghdr* msg, int flags);
  /// shutdown(2). Completes with 0 or -errno.
  void submit_shutdown(operation* op, int fd, int how);
  /// True when the kernel implements `opcode` (probed when the ring was set up).
  bool supports_opcode(int opcode) const noexcept;
  /// Registers a new provided-buffer ring of `count` (power of two) buffers of `size` bytes
  /// as group `group`, with room to grow to `capacity` (power of two, <= 32768, at most 64
  /// x count; 0: count, a fixed ring). Null with `ec` set when the kernel refuses or the
  /// sizes are invalid.
  std::unique_ptr<buf_ring> make_buf_ring(std::uint16_t group, unsigned count, unsigned size, std::error_code& ec,
                                          unsigned capacity = 0);
  /// The loop's own receive buffers (group 0; created on first use with the sizes from
  /// loop_options). Null with `ec` set when they cannot be registered. Loop thread only.
  buf_ring* recv_buffers(std::error_code& ec);
  /// Registers `h`: the destructor calls h->m_on_loop_exit after every operation has
  /// completed and before the buffer rings go. Loop thread only.
  void add_exit_hook(loop_exit_hook* h) noexcept {
    h->m_prev_hook = nullptr;
    h->m_next_hook = m_exit_hooks;
    if (m_exit_hooks != nullptr)
      m_exit_hooks->m_prev_hook = h;
    m_exit_hooks = h;
  }
  /// Unregisters `h` (it must be registered). Loop thread only.
  void remove_exit_hook(loop_exit_hook* h) noexcept {
    if (h->m_prev_hook != nullptr)
      h->m_prev_hook->m_next_hook = h->m_next_hook;
    else
      m_exit_hooks = h->m_next_hook;
    if (h->m_next_hook != nullptr)
      h->m_next_hook->m_prev_hook = h->m_prev_hook;
    h->m_prev_hook = h->m_next_hook = nullptr;
  }
  /// Fires the timers whose deadline has passed, without entering the ring. For a
  /// scheduler that runs many tasks between two loop iterations (thread_pool workers call
  /// it every few tasks), so a timer is not late by a whole batch of tasks. Costs a clock
  /// read when a timer is armed, nothing otherwise. Loop thread only.
  void fire_due_timers() noexcept {
    if (!m_timers.empty() && m_timers.top()->m_deadline <= clock::now())
      fire_timers();
  }
  /// Replaces the loop's receive buffers (for tests: a tiny ring runs dry), growing to
  /// `max_count` (0: a fixed ring of `count`). Only while no receive uses them (no stream
  /// received on this loop yet, or all closed and drained).
  std::error_code reset_recv_buffers(unsigned count, unsigned size, unsigned max_count = 0);

  // ---- file operations (src/loop/submit_fs.cpp): openat, statx, fsync, close.
  /// openat(2) of `path` relative to `dirfd` (AT_FDCWD: the working directory). `path`
  /// must stay alive until completion. Completes with the new descriptor or -errno.
  void submit_openat(operation* op, int dirfd, const char* path, int flags, unsigned mode);
  /// openat2(2) (IORING_OP_OPENAT2, Linux >= 5.6) of `path` relative to `dirfd` with `*how`
  /// (flags, mode, RESOLVE_* restrictions). `path` and `how` must stay alive until
  /// completion. Completes with the new descriptor or -errno (-EINVAL from a kernel without
  /// the opcode).
  void submit_openat2(operation* op, int dirfd, const char* path, ::open_how* how);
  /// statx(2) of `path` relative to `dirfd` (empty path + AT_EMPTY_PATH: `dirfd` itself)
  /// into `*out`. `path` and `out` must stay alive until completion. Completes with 0 or -errno.
  void submit_statx(operation* op, int dirfd, const char* path, int flags, unsigned mask, struct ::statx* out);
  /// fsync(2), or fdatasync(2) when `datasync`. Completes with 0 or -errno.
  void submit_fsync(operation* op, int fd, bool datasync);

  /// close(2) of `fd` through the ring (IORING_OP_CLOSE). Completes with 0 or -errno.
  void submit_close(operation* op, int fd);
  /// Registers fixed buffers for the *_fixed operations (replaces any previous set).
  std::error_code register_buffers(std::span<const ::iovec> buffers);
  /// Unregisters the fixed buffers.
  void unregister_buffers() noexcept;

  // ---- timers kept in the loop (no kernel object per timer)
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

  /// Per-loop recycling allocator for callback operations (loop thread only).
  detail::op_pool& pool() noexcept { return m_pool; }

  // ---- tier A: callbacks. Each returns a handle usable with cancel() while in flight.
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
  friend struct loop_access;
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

}  // namespace saturn

#include <saturn/loop/detail/callbacks.hpp>
