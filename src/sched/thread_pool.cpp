// thread_pool: construction, submission paths, live-task tracking, and shutdown.
//
// Shutdown protocol:
//   1. `stopping` is set and every worker is unparked; each worker leaves its loop and,
//      on its own thread, cancels and waits for its ring's in-flight I/O (completions may
//      still queue tasks: nothing is destroyed yet, since a frame on one worker's table
//      may have I/O in flight on another worker's ring).
//   2. When all rings are drained, the destructor (single-threaded now: workers wait)
//      discards every queue — LIFO slots, deques, yielded lists, loops' run queues and
//      timers, submitters, the injection queue — and then every task still alive in the
//      live tables, until all are empty (destroying a frame may wake or free others).
//   3. Workers destroy their loops on their own threads and exit; the destructor joins
//      them, then the blocking pool.
#include <saturn/config.hpp>
#include <saturn/sched/thread_pool.hpp>

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "loop/hand_off.hpp"
#include "ring/sim/sim_hooks.hpp"
#include "sched/pool_impl.hpp"
#include "sched/sim_pool.hpp"

namespace saturn {
namespace detail {

void futex_wait_while_zero(saturn::detail::atomic<std::uint32_t>* word) noexcept {
  if (sim_pools_here()) [[unlikely]] {
    // Under a sim::world the waiting thread is the one that runs the pool's workers. A
    // deadlock or the time limit ends the process here (sim::run reports them instead).
    sim_drive_until([](void* w) { return static_cast<atomic<std::uint32_t>*>(w)->load(std::memory_order_acquire) != 0; },
                    word);
    return;
  }
  while (word->load(std::memory_order_acquire) == 0)
    futex_wait(word, 0);
}
void futex_wake_all(saturn::detail::atomic<std::uint32_t>* word) noexcept { futex_wake(word, 1 << 30); }

void die_block_on_from_worker() noexcept {
  std::fprintf(stderr,
               "saturn: thread_pool::block_on called from one of the pool's own workers: it would block the "
               "worker (and can deadlock the pool). Inside a task, co_await the task instead.\n");
  std::abort();
}

namespace {
unsigned affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return 1;
}

constexpr std::uint32_t k_worker_shift = 24;
constexpr std::uint32_t k_slot_mask = (1u << k_worker_shift) - 1;
constexpr std::uint32_t k_foreign = 255;  // worker bits of a task in pool_impl::foreign_live (workers are 0..254)

}  // namespace

void pool_impl::wait_for_drain(submitter_queue& q) noexcept {
  constexpr auto k_sleep = std::chrono::milliseconds(2);
  constexpr int k_max_sleeps = 5;  // 10 ms a submit at most: slowed, never deadlocked
  for (int i = 0; i < k_max_sleeps; ++i) {
    // ordering: seq_cst store, then a seq_cst fence before reading the queue's size,
    // against the worker's seq_cst steal CAS then seq_cst load of drain_waiter (Dekker):
    // either the worker sees the flag or we see its steal. The timeout covers the rest.
    q.drain_waiter.store(1, std::memory_order_seq_cst);
    thread_fence(std::memory_order_seq_cst);
    if (q.deque.size_approx() <= drain_low() || stopping.load(std::memory_order_acquire))
      break;
    futex_wait(&q.drain_waiter, 1, k_sleep);
    if (q.deque.size_approx() <= drain_low())
      break;
  }
  q.drain_waiter.store(0, std::memory_order_relaxed);
}

namespace {
void discard(runnable* r) noexcept { r->m_fn(r, run_mode::discard); }
}  // namespace
}  // namespace detail

thread_pool::thread_pool(const pool_options& opts) : m_impl(std::make_unique<detail::pool_impl>()) {
  detail::pool_impl& p = *m_impl;
  p.owner = this;
  p.opts = opts;
  const unsigned n = opts.threads != 0 ? opts.threads : detail::affinity_cpus();
  if (n > 255)
    throw std::invalid_argument("saturn: thread_pool supports at most 255 workers");
  p.blocking.max_threads = opts.max_blocking_threads == 0 ? 1 : opts.max_blocking_threads;
  p.drained = std::make_unique<std::latch>(n);
  p.released = std::make_unique<std::latch>(1);
  m_root.sched = this;
  for (unsigned i = 0; i < n; ++i) {
    auto w = std::make_unique<detail::worker>();
    w->pool = &p;
    w->index = i;
    w->rng = 0x9E3779B9u * (i + 1);
    p.workers.push_back(std::move(w));
  }
  if (config::simulation && ring::sim_active()) {
    detail::sim_pool_start(p);  // no threads: the world's thread steps the workers
    detail::register_pool_stats(p);
    return;
  }
  // io mode: each loop is created on its worker thread (SINGLE_ISSUER); a setup failure
  // there is reported here, on the constructing thread.
  std::latch started(n);
  std::vector<std::exception_ptr> errors(n);
  const auto run_worker = [this, &p, &started, &errors](detail::worker& w, unsigned i) {
    set_current(this);
    try {
      if (p.opts.mode == pool_mode::io) {
        w.loop = std::make_unique<event_loop>(p.opts.loop);
        w.loop->add_keep_alive();
        w.loop_ptr.store(w.loop.get(), std::memory_order_release);
      }
    } catch (...) {
      errors[i] = std::current_exception();
    }
    const bool ok = !errors[i];
    started.count_down();
    if (!ok) {
      p.drained->count_down();
      p.released->wait();
      return;
    }
    p.worker_main(w);
  };
  for (unsigned i = 0; i < n; ++i) {
    detail::worker& w = *p.workers[i];
    try {
      w.thread = std::thread(run_worker, std::ref(w), i);
    } catch (const std::system_error& e) {
      // The OS refused a thread (RLIMIT_NPROC, memory): the workers already running must
      // be stopped and joined before this constructor throws, or their std::thread objects
      // would terminate the process. The ones never started count themselves out here.
      errors[i] = std::make_exception_ptr(std::system_error(
          e.code(), "saturn: thread_pool: cannot start worker thread " + std::to_string(i + 1) + " of " +
                        std::to_string(n) + " (raise the process limit, ulimit -u, or ask for fewer threads)"));
      for (unsigned j = i; j < n; ++j) {
        started.count_down();
        p.drained->count_down();
      }
      break;
    }
  }
  started.wait();
  for (auto& e : errors) {
    if (e) {
      p.stopping.store(true);
      for (auto& w : p.workers)
        p.unpark(*w);
      p.drained->wait();
      p.released->count_down();
      for (auto& w : p.workers)
        if (w->thread.joinable())
          w->thread.join();
      std::rethrow_exception(e);
    }
  }
  detail::register_pool_stats(p);
}

thread_pool::~thread_pool() {
  detail::pool_impl& p = *m_impl;
  detail::wait_for_hand_offs(p.foreign_posters);  // one may still be waking a worker
  // First, so no metrics reader looks at a worker or a loop from here on.
  detail::unregister_pool_stats(p);
  // 1. Stop and let every worker drain its ring.
  p.stopping.store(true, std::memory_order_seq_cst);
  if (p.simulated)
    detail::sim_pool_drain(p);
  else
    for (auto& w : p.workers)
      p.unpark(*w);
  p.drained->wait();
  // Blocking calls may still wake tasks (and notify workers' loops): let every running and
  // queued call finish before any frame or loop is destroyed. Their wakes land in the
  // queues discarded below.
  {
    std::unique_lock lock(p.blocking.mutex);
    p.blocking.stopping = true;
    p.blocking.cv.notify_all();
    p.blocking.all_done.wait(lock, [&] { return p.blocking.threads == 0; });
  }
  // 2. Discard everything queued, then everything still alive, until nothing is left.
  for (bool again = true; again;) {
    again = false;
    for (auto& wp : p.workers) {
      detail::worker& w = *wp;
      if (runnable* r = w.lifo.exchange(nullptr)) {
        detail::discard(r);
        again = true;
      }
      while (runnable* r = w.deque.steal()) {
        detail::discard(r);
        again = true;
      }
      while (runnable* r = w.pop_yielded()) {
        detail::discard(r);
        again = true;
      }
      while (runnable* r = w.pop_pinned()) {  // the inbox too
        detail::discard(r);
        again = true;
      }
      if (w.loop)
        w.loop->discard_all();
    }
    const unsigned nsub = p.submitter_count.load();
    for (unsigned i = 0; i < nsub; ++i)
      if (detail::submitter_queue* q = p.submitter_slots[i].load())
        while (runnable* r = q->deque.steal()) {
          detail::discard(r);
          again = true;
        }
    runnable* first = nullptr;
    while (p.inject.pop_batch(1024, &first) != 0) {
      while (first != nullptr) {
        runnable* next = first->m_next_runnable;
        detail::discard(first);
        first = next;
      }
      again = true;
    }
    // spawned_entry's discard: untrack + abandon (which may free other tasks: slots never
    // move, so the walk goes on safely).
    for (auto& wp : p.workers)
      wp->live.for_each_alive([&](detail::promise_base* t) {
        t->m_fn(t, run_mode::discard);
        again = true;
      });
    for (;;) {
      detail::promise_base* t = nullptr;
      {
        std::lock_guard lock(p.foreign_live);
        if (!p.foreign_live.items.empty())
          t = p.foreign_live.items.back();
      }
      if (t == nullptr)
        break;
      t->m_fn(t, run_mode::discard);
      again = true;
    }
  }
  // 3. Workers destroy their loops and exit.
  p.released->count_down();
  if (p.simulated)
    detail::sim_pool_release(p);
  for (auto& w : p.workers)
    if (w->thread.joinable())
      w->thread.join();
  // The blocking pool: wait for running calls, join its threads.
  {
    std::unique_lock lock(p.blocking.mutex);
    p.blocking.stopping = true;
    p.blocking.cv.notify_all();
    p.blocking.all_done.wait(lock, [&] { return p.blocking.threads == 0; });
  }
  for (auto& t : p.blocking.finished)
    t.join();
}

bool thread_pool::on_worker_thread() const noexcept {
  return detail::t_worker != nullptr && detail::t_worker->pool == m_impl.get();
}

std::optional<unsigned> thread_pool::worker_index() const noexcept {
  if (!on_worker_thread())
    return std::nullopt;
  return detail::t_worker->index;
}

unsigned thread_pool::threads() const noexcept { return static_cast<unsigned>(m_impl->workers.size()); }
pool_mode thread_pool::mode() const noexcept { return m_impl->opts.mode; }

void thread_pool::schedule(runnable* r) noexcept {
  detail::pool_impl& p = *m_impl;
  detail::worker* w = detail::t_worker;
  if (w != nullptr && w->pool == &p) {
    if (w->polling_io) {
      // Queued where the loop cannot see it: this turn of the loop must not go to sleep
      // (a timer fired or a runnable ran just before run_once's blocking wait).
      w->loop->stay_awake();
      if (p.opts.pin_io_wakeups) {
        w->push_pinned(r);  // stays here, wakes nobody (pool_options::pin_io_wakeups)
        return;
      }
      detail::push_local(p, *w, r);
      w->notify_deferred = true;  // one notify after the completion batch (poll_io)
      return;
    }
    detail::push_local(p, *w, r);
    p.notify_from_worker();
  } else {
    detail::hand_off poster(p.foreign_posters);
    p.inject.push(r);
    p.notify_one();
  }
}

void thread_pool::spawn(runnable* r) noexcept {
  detail::pool_impl& p = *m_impl;
  detail::worker* w = detail::t_worker;
  if (w != nullptr && w->pool == &p) {
    // The newest spawn runs next on this worker (cache-hot); the one it displaces goes to
    // the deque where others can steal it.
    if (runnable* old = w->lifo.exchange(r, std::memory_order_acq_rel))
      detail::push_local(p, *w, old);
    if (w->polling_io) {
      w->loop->stay_awake();  // as in schedule()
      w->notify_deferred = true;
    } else {
      p.notify_from_worker();
    }
  } else {
    detail::hand_off poster(p.foreign_posters);
    p.inject.push(r);
    p.notify_one();
    p.yield_if_backlogged(p.inject.size_hint());  // an unregistered outside thread
  }
}

void thread_pool::spawn_runnable(runnable* r) noexcept { spawn(r); }

void thread_pool::check_worker_index(unsigned worker, const char* op) const {
  if (worker >= threads())
    throw std::out_of_range("thread_pool::" + std::string(op) + ": worker " + std::to_string(worker) +
                            " does not exist (the pool has " + std::to_string(threads()) + ", numbered from 0)");
}

void thread_pool::spawn_on(unsigned worker, runnable* r) {
  check_worker_index(worker, "spawn_on");
  start_on(worker, r);
}

void thread_pool::start_on(unsigned index, runnable* r) noexcept {
  detail::pool_impl& p = *m_impl;
  detail::worker& target = *p.workers[index];
  if (detail::t_worker == &target) {
    target.push_pinned(r);
    if (target.polling_io)
      target.loop->stay_awake();  // as in schedule()
    return;
  }
  // ordering: the inbox push is a seq_cst CAS; wake_worker's lock then orders it against
  // the target's park() (see there).
  detail::hand_off poster(p.foreign_posters);  // from another worker of this pool too: harmless
  target.inbox.push(r);
  p.wake_worker(target);
}

void thread_pool::yield(runnable* r) noexcept {
  detail::worker* w = detail::t_worker;
  if (w != nullptr && w->pool == m_impl.get()) {
    w->push_yielded(r);
    if (w->polling_io)
      w->loop->stay_awake();  // as in schedule()
  } else {
    schedule(r);
  }
}

// m_live_index = worker << k_worker_shift | slot; worker k_foreign means foreign_live.
void thread_pool::track(detail::promise_base* t) noexcept {
  detail::pool_impl& p = *m_impl;
  detail::worker* w = detail::t_worker;
  saturn::detail::atomic_ref<std::uint32_t> own(t->m_live_index);
  if (w != nullptr && w->pool == &p) [[likely]] {
    const std::uint32_t slot = w->live.track(t, t->stashed_spawn_site(), w->coarse_now_ns);
    if (slot != detail::live_slots::k_max_slots) [[likely]] {
      // ordering: relaxed; read by untrack on the thread the task ends on, which the
      // task's hand-over orders after this.
      own.store((w->index << detail::k_worker_shift) | slot, std::memory_order_relaxed);
      return;
    }
  }
  std::lock_guard lock(p.foreign_live);
  // ordering: m_live_index of foreign tasks is read without the lock by untrack (for the
  // k_foreign bits, which never change), so every access to it is atomic (relaxed; the
  // lock orders the rest).
  own.store((detail::k_foreign << detail::k_worker_shift) | static_cast<std::uint32_t>(p.foreign_live.items.size()),
            std::memory_order_relaxed);
  p.foreign_live.items.push_back(t);
}

void thread_pool::untrack(detail::promise_base* t) noexcept {
  detail::pool_impl& p = *m_impl;
  saturn::detail::atomic_ref<std::uint32_t> own(t->m_live_index);
  const std::uint32_t idx = own.load(std::memory_order_relaxed);
  if (idx == detail::live_table::npos)
    return;
  const std::uint32_t owner = idx >> detail::k_worker_shift;
  if (owner != detail::k_foreign) [[likely]] {
    detail::worker& w = *p.workers[owner];
    if (detail::t_worker == &w)
      w.live.untrack_local(idx & detail::k_slot_mask);
    else
      w.live.untrack_remote(idx & detail::k_slot_mask);
    own.store(detail::live_table::npos, std::memory_order_relaxed);
    return;
  }
  std::lock_guard lock(p.foreign_live);
  // lifetime: re-read under the lock; a concurrent swap-remove may have moved this task.
  const std::uint32_t slot = own.load(std::memory_order_relaxed) & detail::k_slot_mask;
  detail::promise_base* last = p.foreign_live.items.back();
  p.foreign_live.items[slot] = last;
  saturn::detail::atomic_ref<std::uint32_t>(last->m_live_index)
      .store((detail::k_foreign << detail::k_worker_shift) | slot, std::memory_order_relaxed);
  p.foreign_live.items.pop_back();
  own.store(detail::live_table::npos, std::memory_order_relaxed);
}

thread_pool::submitter thread_pool::register_submitter() {
  detail::pool_impl& p = *m_impl;
  std::lock_guard lock(p.submitters_mutex);
  for (auto& q : p.submitter_queues) {
    if (!q->in_use) {
      q->in_use = true;
      p.active_submitters.fetch_add(1, std::memory_order_relaxed);
      return submitter(&p, q.get(), &m_root);
    }
  }
  const unsigned n = p.submitter_count.load(std::memory_order_relaxed);
  if (n == detail::pool_impl::k_max_submitters)
    return submitter(&p, nullptr, &m_root);  // falls back to the injection queue
  auto q = std::make_unique<detail::submitter_queue>();
  q->in_use = true;
  p.active_submitters.fetch_add(1, std::memory_order_relaxed);
  detail::submitter_queue* raw = q.get();
  p.submitter_queues.push_back(std::move(q));
  p.submitter_slots[n].store(raw, std::memory_order_release);
  p.submitter_count.store(n + 1, std::memory_order_release);
  return submitter(&p, raw, &m_root);
}

thread_pool::submitter::submitter(submitter&& o) noexcept
    : m_impl(std::exchange(o.m_impl, nullptr)), m_queue(o.m_queue), m_root(o.m_root) {}

thread_pool::submitter::~submitter() {
  if (m_impl == nullptr || m_queue == nullptr)
    return;
  std::lock_guard lock(m_impl->submitters_mutex);
  static_cast<detail::submitter_queue*>(m_queue)->in_use = false;  // its items are still stolen
  m_impl->active_submitters.fetch_sub(1, std::memory_order_relaxed);
}

void thread_pool::submitter::submit(runnable* r) noexcept {
  detail::hand_off poster(m_impl->foreign_posters);
  auto* q = static_cast<detail::submitter_queue*>(m_queue);
  if (q == nullptr) {
    m_impl->inject.push(r);
  } else if (!q->deque.push(r)) [[unlikely]] {
    // Full: the older half moves to the injection queue in one locked step, so the oldest
    // tasks are not left waiting behind newer ones.
    detail::spill_half(*m_impl, q->deque);
    if (!q->deque.push(r))
      m_impl->inject.push(r);
  }
  m_impl->notify_one();
  if (q == nullptr)
    m_impl->yield_if_backlogged(m_impl->inject.size_hint());
  else if (m_impl->opts.submit_backlog != 0 && q->deque.size_approx() > m_impl->submit_high()) [[unlikely]]
    m_impl->wait_for_drain(*q);
}

}  // namespace saturn
