// event_loop: construction, the run loop (see the iteration in event_loop.hpp), CQE
// dispatch, and shutdown.
#include <saturn/loop/event_loop.hpp>

#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/exit_hook.hpp>

#include <algorithm>

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>

#include "loop/current_loop.hpp"
#include "loop/hand_off.hpp"
#include "loop/user_data.hpp"
#include "ring/ring.hpp"

namespace saturn {

constinit thread_local runnable* detail::t_running = nullptr;

namespace {
thread_local event_loop* t_current = nullptr;
/// Ready runnables run per iteration before I/O is polled again (a task that keeps
/// re-posting itself cannot starve completions).
constexpr int k_ready_budget = 256;
}  // namespace

event_loop* event_loop::current() noexcept { return t_current; }
event_loop* detail::exchange_current_loop(event_loop* l) noexcept { return std::exchange(t_current, l); }

event_loop::event_loop(const loop_options& opts) {
  ring::setup_options ro;
  ro.entries = opts.entries;
  ro.cq_entries = opts.cq_entries;
  ro.single_issuer = true;
  ro.defer_taskrun = opts.defer_taskrun;
  m_ring = std::make_unique<ring::uring>(ro);
  m_recv_buffer_count = opts.recv_buffer_count;
  m_recv_buffer_size = opts.recv_buffer_size;
  // Growth is in chunks of recv_buffer_count, at most buf_ring::max_chunks of them.
  // (An invalid count is reported when the ring is first made.)
  const unsigned most = std::max(opts.recv_buffer_count, std::min(opts.recv_buffer_count * buf_ring::max_chunks, 32768u));
  m_recv_buffer_max = std::clamp(opts.recv_buffer_max, opts.recv_buffer_count, most);
  // A simulated ring (saturn/sim) keeps virtual time: a timer is never late, so no spin.
  m_timer_spin_ns = opts.timer_spin.count() > 0 && !m_ring->simulated() ? opts.timer_spin.count() : 0;
  m_wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m_wake_fd < 0)
    throw std::system_error(errno, std::system_category(),
                            "saturn: eventfd() for the loop's wake-up failed (out of file descriptors? raise "
                            "RLIMIT_NOFILE)");
  m_ring->exempt_from_faults(detail::ud_wake_read);
  m_prev_current = t_current;
  t_current = this;
}

event_loop::~event_loop() {
  detail::wait_for_hand_offs(m_remote_posters);  // one may still be in wake()
  if (m_ring) {
    shutdown();
    // The wake read is the loop's own operation: cancel it and wait for its CQE too.
    while (m_wake_armed && m_ring) {
      io_uring_sqe* sqe = m_ring->get_sqe();
      io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, detail::ud_ignore);
      m_ring->enter(1, 100'000'000);
      reap();
    }
  }
  // Users of this loop (sockets' multishot operations) let go of it; nothing is in flight.
  while (m_exit_hooks != nullptr) {
    loop_exit_hook* h = m_exit_hooks;
    ext::remove_exit_hook(*this, h);
    h->m_on_loop_exit(h);
  }
  m_recv_buffers.reset();
  ::close(m_wake_fd);
  // Loops may die in any order: unlink this one from the thread's chain wherever it is.
  for (event_loop** p = &t_current; *p != nullptr; p = &(*p)->m_prev_current) {
    if (*p == this) {
      *p = m_prev_current;
      break;
    }
  }
}

int event_loop::ring_fd() const noexcept { return m_ring->fd(); }
bool event_loop::defer_taskrun() const noexcept { return m_ring->feature_set().defer_taskrun; }
unsigned event_loop::sq_entries() const noexcept { return m_ring->sq_entries(); }

inline void event_loop::check_enter(int r) {
  if (r < 0 && r != -ETIME && r != -EINTR && r != -EBUSY && r != -EAGAIN)
    throw std::system_error(-r, std::system_category(), "saturn: io_uring_enter in the event loop");
}

inline void event_loop::count_submitted(int r) {
  if (r > 0)
    m_stats.sqes_submitted += static_cast<unsigned>(r);
  check_enter(r);
}

// The hot path of every completion, so it is kept to one range check (every sentinel,
// and liburing's internal timeout's all-ones user_data, fall outside the addresses of
// operations), the in-flight count and the indirect call. m_stats.completions is added
// per batch by reap(); a sentinel takes its count back here.
inline void event_loop::dispatch(std::uint64_t user_data, int res, unsigned flags) noexcept {
  static_assert(LIBURING_UDATA_TIMEOUT == ~std::uint64_t{0}, "the range check below assumes it");
  constexpr std::uint64_t first_op = detail::ud_max_sentinel + 1;
  if (user_data - first_op >= LIBURING_UDATA_TIMEOUT - first_op) [[unlikely]] {
    --m_stats.completions;
    if (user_data == detail::ud_wake_read) {
      ++m_stats.remote_wakes;
      m_wake_armed = false;  // re-armed lazily, just before the next sleep
    } else if (user_data == detail::ud_msg_wake) {
      ++m_stats.remote_wakes;  // a MSG_RING wake did its job by ending the wait
    }
    return;  // other sentinels: ignored CQEs
  }
  auto* op = reinterpret_cast<operation*>(user_data);
  if ((flags & IORING_CQE_F_MORE) == 0)
    --m_in_flight;
  op->m_complete(op, res, flags);
}

bool event_loop::has_work() const noexcept {
  return m_ready.head != nullptr || m_in_flight != 0 || !m_timers.empty() || m_keep_alive != 0 ||
         m_remote.maybe_nonempty();
}

void event_loop::run() {
  while (!m_stop.load(std::memory_order_relaxed)) {
    if (!run_once(true))
      break;
  }
  m_stop.store(false, std::memory_order_relaxed);
}

bool event_loop::run_once(bool may_block) {
  m_stay_awake = false;
  if (m_remote.maybe_nonempty())
    drain_remote();
  if (m_ready.head != nullptr)
    run_ready();
  if (!m_timers.empty())
    fire_timers();
  // New SQEs go in with a non-waiting enter that also collects what completed meanwhile.
  // Only when that brings nothing, and nothing is ready, does the loop go to sleep: a
  // loop that sleeps pays one more syscall (~0.1 µs, noise next to any wake-up), a busy
  // loop pays neither a second syscall nor the sleep announcement.
  if (m_ring->pending() != 0) {
    ++m_stats.enters;
    count_submitted(m_ring->submit_and_get_events());
    // The busy path (completions came in, or work is ready): no sleep decision to make.
    if (reap() != 0 || m_ready.head != nullptr || m_stay_awake || !may_block) [[likely]]
      return has_work();
  } else if (m_ready.head != nullptr || m_stay_awake || !may_block) {
    if (m_in_flight != 0)
      poll();  // busy with ready work: still collect completions every iteration
    return has_work();
  }
  const bool waiting_for_something =
      m_in_flight != 0 || !m_timers.empty() || m_keep_alive != 0 || m_notified.load(std::memory_order_relaxed);
  if (waiting_for_something && !m_stop.load(std::memory_order_relaxed))
    sleep();
  else if (m_in_flight != 0)
    poll();  // stopping: collect without sleeping
  return has_work();
}

void event_loop::poll() {
  ++m_stats.enters;
  count_submitted(m_ring->submit_and_get_events());
  reap();
}

void event_loop::sleep() {
  if (!m_wake_armed)
    arm_wake_read();
  std::int64_t timeout_ns = -1;
  if (!m_timers.empty()) {
    auto left = m_timers.top()->m_deadline - clock::now();
    timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    // Within timer_spin of the deadline: poll, and let the caller's loop come back here,
    // rather than pay a wake-up that would make the timer late. Further out: sleep until
    // timer_spin before it.
    if (timeout_ns <= m_timer_spin_ns) {
      poll();
      return;
    }
    timeout_ns -= m_timer_spin_ns;
  }
  // Wake protocol, loop side: announce the sleep, then look at the inbox once more. A
  // producer pushes, then reads m_sleeping; with both sides seq_cst one sees the other.
  m_sleeping.store(true, std::memory_order_seq_cst);
  if (m_remote.nonempty_seq_cst() || m_stop.load(std::memory_order_seq_cst) ||
      m_notified.exchange(false, std::memory_order_seq_cst)) {
    m_sleeping.store(false, std::memory_order_relaxed);
    poll();
    return;
  }
  ++m_stats.enters;
  int r = m_ring->enter(1, timeout_ns);
  // ordering: relaxed; a producer that still sees true sends one redundant wake, harmless.
  m_sleeping.store(false, std::memory_order_relaxed);
  count_submitted(r);
  reap();
}

unsigned event_loop::reap() noexcept {
  unsigned total = 0;
  for (;;) {
    unsigned n = m_ring->reap([this](std::uint64_t ud, int res, unsigned flags) { dispatch(ud, res, flags); });
    m_stats.completions += n;  // dispatch() takes back the sentinels'
    total += n;
    // Completions the kernel kept aside (CQ overflow, IORING_FEAT_NODROP) can only exist
    // after the CQ filled up; every GETEVENTS enter flushes them too, this pulls them in now.
    if (n < m_ring->cq_entries() / 2 || !m_ring->cq_overflowed())
      break;
    ++m_stats.cq_overflows;
    m_ring->submit_and_get_events();
  }
  return total;
}

void event_loop::run_ready() noexcept {
  // Only what was queued when the pass began: later posts wait for the next iteration.
  runnable* const last = m_ready.tail;
  for (int budget = k_ready_budget; budget > 0 && m_ready.head != nullptr; --budget) {
    runnable* r = m_ready.pop();
    detail::run_runnable(r);
    if (r == last)
      break;
  }
}

void event_loop::drain_remote() noexcept {
  runnable* r = m_remote.take_all();
  while (r != nullptr) {
    runnable* next = r->m_next_runnable;
    post(r);
    r = next;
  }
}

void event_loop::fire_timers() noexcept {
  const clock::time_point now = clock::now();
  while (!m_timers.empty() && m_timers.top()->m_deadline <= now) {
    timer_node* t = m_timers.pop();
    ++m_stats.timers_fired;
    t->m_fire(t, run_mode::run);
  }
}

bool event_loop::cancel_after(timer_handle h) noexcept {
  timer_node* t = h.node;
  // lifetime: a fired timer's memory may hold another object now; only a node that is
  // armed in this heap at its index, with the handle's sequence number, is ours.
  if (t == nullptr || !m_timers.contains(t) || static_cast<detail::callback_timer_base*>(t)->m_seq != h.seq)
    return false;
  m_timers.erase(t);
  t->m_fire(t, run_mode::discard);
  return true;
}

void event_loop::discard_queued() noexcept {
  drain_remote();
  while (runnable* r = m_ready.pop())
    r->m_fn(r, run_mode::discard);
}

void event_loop::drain_io() noexcept {
  // lifetime: every operation still in the kernel may write its buffers until its CQE
  // arrives. Cancel them all and wait for every CQE before anything they point at (task
  // frames, the ring itself) goes away.
  for (int round = 0; m_in_flight != 0; ++round) {
    try {
      io_uring_sqe* sqe = m_ring->get_sqe();
      io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, detail::ud_ignore);
      m_ring->enter(1, 100'000'000);
    } catch (const std::system_error&) {
    }
    reap();
    if (round == 600) {
      std::fprintf(stderr,
                   "saturn: event loop shut down with %zu operation(s) that ignored cancellation for 60 s; "
                   "leaking the ring so the kernel cannot write freed memory\n",
                   m_in_flight);
      (void)m_ring.release();
      return;
    }
  }
}

void event_loop::discard_all() noexcept {
  for (;;) {
    discard_queued();
    if (m_timers.empty())
      break;
    timer_node* t = m_timers.pop();
    t->m_fire(t, run_mode::discard);
  }
}

void event_loop::shutdown() noexcept {
  // Completions may queue more work: drain I/O and discard until nothing is left.
  do {
    if (m_ring)
      drain_io();
    discard_all();
  } while (m_in_flight != 0 && m_ring);
}

void event_loop::notify() noexcept {
  m_notified.store(true, std::memory_order_seq_cst);
  wake();
}

}  // namespace saturn
