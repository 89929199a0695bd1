/// \file
/// `thread_pool`: saturn's multi-threaded, work-stealing runtime.
///
/// N workers (default: the CPUs in the process's affinity mask), each with a Chase-Lev
/// deque and a LIFO slot for the task it spawned last, and — in io mode — its own
/// io_uring event loop, so an operation completes on the worker that submitted it. Idle
/// workers steal half of a random victim's queue, spin briefly, then park (in their ring,
/// or on a futex in cpu_bound mode). Tasks submitted from outside go through a global
/// injection queue, or through a registered submitter's own queue.
///
/// ```
/// saturn::thread_pool pool;                       // io mode, one worker per CPU
/// int v = pool.block_on(compute());               // from a non-worker thread
/// pool.post([] { /* ... */ });                    // fire-and-forget callable
/// auto h = pool.spawn(some_task());               // join_handle<T>
/// auto g = pool.spawn_on(1, per_core_task());       // starts on worker 1, not stolen
/// ```
#pragma once

#include <saturn/loop/event_loop.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/scheduler.hpp>
#include <saturn/task/task.hpp>

#include <saturn/detail/atomic.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace saturn {

/// What the workers are set up for.
enum class pool_mode {
  io,         ///< each worker owns an event loop (rings, timers, coroutine I/O)
  cpu_bound,  ///< plain threads running tasks; no rings, no per-worker I/O setup
};

/// How to build a pool.
struct pool_options {
  unsigned threads = 0;            ///< workers; 0 = the CPUs in the affinity mask
  pool_mode mode = pool_mode::io;
  loop_options loop{};             ///< io mode: each worker's loop
  unsigned spin_before_park_us = 50;  ///< an idle worker searches this long before parking
  unsigned max_blocking_threads = 64; ///< cap of the spawn_blocking pool
  /// io mode: a task woken by its worker's own loop (an I/O completion, a loop timer, a
  /// post to that loop) stays on that worker, in a queue other workers do not steal from,
  /// and wakes nobody. Its next operation then goes to the same ring and a connection
  /// never hops between cores (what thread-per-core servers get by construction);
  /// spawned and externally woken tasks are still stolen. Turn off when tasks do long
  /// CPU work right after their I/O and the pool should spread that work instead.
  bool pin_io_wakeups = true;
  /// Backpressure on threads outside the pool, so that a producer which outpaces the
  /// workers does not grow an unbounded queue (memory, and a queueing delay of the whole
  /// flood for every task behind it). A registered submitter whose own queue holds more
  /// than its share of this (split evenly among the registered submitters alive, at
  /// least 64 tasks each) after a submit sleeps until the workers have taken it down to
  /// half (a futex the stealing worker wakes; each sleep is bounded by 2 ms, and one
  /// submit waits at most 10 ms, so a pool whose workers are stuck slows a submitter but
  /// never deadlocks it). post/spawn from a thread that is neither a worker nor a
  /// registered submitter yields its CPU once (sched_yield) when the injection queue holds
  /// more than this. Nothing is ever dropped. The sleeping submitter also leaves its CPU
  /// to the workers where they share CPUs. 0 turns backpressure off.
  unsigned submit_backlog = 1024;
};

namespace detail {
struct pool_impl;

/// A posted callable: a runnable carrying F, allocated from the frame allocator.
template <class F>
struct callable_runnable final : runnable {
  F m_call;
  template <class G>
  explicit callable_runnable(G&& f) : m_call(std::forward<G>(f)) {
    m_fn = &run;
  }
  // A posted node lives where it was allocated until it runs: never copied or moved.
  callable_runnable(const callable_runnable&) = delete;
  callable_runnable(callable_runnable&&) = delete;
  callable_runnable& operator=(const callable_runnable&) = delete;
  callable_runnable& operator=(callable_runnable&&) = delete;
  static void* operator new(std::size_t n) { return frame_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
  static void run(runnable* r, run_mode mode) noexcept {
    auto* self = static_cast<callable_runnable*>(r);
    if (mode == run_mode::run)
      self->m_call();
    delete self;
  }
};
}  // namespace detail

/// A multi-threaded work-stealing runtime.
///
/// Threading: every member may be called from any thread, except block_on (not from a
/// worker of this pool: it would block the worker) and the destructor (not from a worker).
/// Destroying the pool stops the workers, cancels and waits for in-flight I/O, destroys
/// every task still queued or suspended exactly once, and joins every thread.
class thread_pool final : public scheduler {
 public:
  explicit thread_pool(const pool_options& opts = {});
  ~thread_pool() override;
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  /// Runs `t` on the workers and blocks the calling (non-worker) thread until it ends;
  /// returns its value or rethrows its exception.
  template <class T>
  T block_on(task<T> t);

  /// Starts `t` on the pool; any thread. `site` (leave it defaulted) is the spawn site a
  /// task dump shows (saturn/sched/task_dump.hpp).
  template <class T>
  join_handle<T> spawn(task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
    return spawn_in(m_root, std::move(t), site);
  }

  /// Starts `t` on worker `worker` (0 <= worker < threads()) and returns its handle; any
  /// thread. The task's first step, up to its first suspension, runs on that worker and
  /// no other worker steals it before. After a suspension it continues by the usual
  /// rules: in io mode with pool_options::pin_io_wakeups, a wake-up by that worker's loop
  /// (its I/O, its timers) keeps it there, so a task that starts by awaiting I/O stays
  /// on its worker. This is the placement a thread-per-core server gets by construction,
  /// for one task per worker: a SO_REUSEPORT listener each, a per-core cache.
  /// Throws std::out_of_range when `worker` is not below threads() (`t` is then
  /// destroyed unstarted).
  template <class T>
  join_handle<T> spawn_on(unsigned worker, task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
    check_worker_index(worker, "spawn_on");
    auto h = detail::prepare_spawn(m_root, t, site);
    start_on(worker, &h.promise());
    return join_handle<T>(h);
  }

  /// Runs `fn()` on a worker, fire-and-forget; any thread. `fn` must not throw.
  template <class F>
  void post(F&& fn) {
    spawn_runnable(new detail::callable_runnable<std::decay_t<F>>(std::forward<F>(fn)));
  }

  /// Hands a blocking call to the separate elastic blocking pool (never a worker) at once,
  /// and returns a task that completes with its result (or rethrows its exception). The pool grows up to
  /// max_blocking_threads and idle blocking threads exit after 10 s.
  /// g++ 12: a lambda with by-copy captures written in the operand (`co_await
  /// pool.spawn_blocking([path] {...})`, path a std::string) is destroyed twice (a double
  /// free); name the task or the lambda first (`auto t = pool.spawn_blocking([path] {...});
  /// co_await std::move(t);`).
  template <class F>
  auto spawn_blocking(F fn) -> task<std::invoke_result_t<F&>>;

  /// A per-thread submission queue: posts through it go to a queue only this thread
  /// writes (no shared cache line with other submitters); workers steal from it.
  /// Threading: use a submitter only on the thread that registered it; it must not
  /// outlive the pool.
  class submitter {
   public:
    submitter(submitter&&) noexcept;
    ~submitter();
    /// Queues a runnable (see post()).
    void submit(runnable* r) noexcept;
    template <class F>
    void post(F&& fn) {
      submit(new detail::callable_runnable<std::decay_t<F>>(std::forward<F>(fn)));
    }
    template <class T>
    join_handle<T> spawn(task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
      auto h = detail::prepare_spawn(*m_root, t, site);
      submit(&h.promise());
      return join_handle<T>(h);
    }

   private:
    friend class thread_pool;
    submitter(detail::pool_impl* impl, void* queue, task_context* root) noexcept
        : m_impl(impl), m_queue(queue), m_root(root) {}
    detail::pool_impl* m_impl;
    void* m_queue;
    task_context* m_root;
  };
  /// Registers the calling thread as a submitter.
  submitter register_submitter();

  /// Number of workers.
  unsigned threads() const noexcept;
  /// True when the calling thread is one of this pool's workers.
  bool on_worker_thread() const noexcept;
  /// The index (0 to threads() - 1, as spawn_on takes it) of the worker calling, or
  /// nothing on a thread that is not one of this pool's workers. A task may move between
  /// workers at its suspensions, so the answer holds until the task's next co_await.
  std::optional<unsigned> worker_index() const noexcept;
  /// The mode the pool was built in.
  pool_mode mode() const noexcept;
  /// Queues a runnable as a new unit of work (stealable); any thread.
  void spawn_runnable(runnable* r) noexcept;
  /// Queues a runnable to run on worker `worker` only (see spawn_on); any thread. The
  /// index must be below threads().
  void start_on(unsigned worker, runnable* r) noexcept;

  // scheduler
  void schedule(runnable* r) noexcept override;
  void spawn(runnable* r) noexcept override;
  /// check_worker_index, then start_on (see spawn_on above).
  void spawn_on(unsigned worker, runnable* r) override;
  void yield(runnable* r) noexcept override;
  void track(detail::promise_base* p) noexcept override;
  void untrack(detail::promise_base* p) noexcept override;
  task_context& root_context() noexcept override { return m_root; }

 private:
  void run_blocking(std::function<void()> fn);
  /// Throws std::out_of_range naming `op` when `worker` is not below threads().
  void check_worker_index(unsigned worker, const char* op) const;

  std::unique_ptr<detail::pool_impl> m_impl;
  task_context m_root;
};

namespace detail {

void futex_wait_while_zero(saturn::detail::atomic<std::uint32_t>* word) noexcept;
void futex_wake_all(saturn::detail::atomic<std::uint32_t>* word) noexcept;
[[noreturn]] void die_block_on_from_worker() noexcept;

/// Completion state shared by block_on's caller and the task.
template <class T>
struct block_on_state {
  std::optional<task_result<T>> result;
  saturn::detail::atomic<std::uint32_t> done{0};
};

template <class T>
task<void> pool_block_on_driver(task<T> t, block_on_state<T>& st) {
  st.result.emplace();
  try {
    // lifetime: the task is moved into this scope so its frame (and its arguments) is
    // destroyed before block_on's caller is released.
    task<T> body = std::move(t);
    if constexpr (std::is_void_v<T>) {
      co_await std::move(body);
    } else {
      st.result->return_value(co_await std::move(body));
    }
  } catch (...) {
    st.result->m_exception = std::current_exception();
  }
  // ordering: release publishes the result to the blocked caller.
  st.done.store(1, std::memory_order_release);
  futex_wake_all(&st.done);
}


template <class R>
struct blocking_state {
  std::optional<task_result<R>> result;
  promise_base* waiter = nullptr;
  saturn::detail::atomic<std::uint32_t> state{0};  // 1: result ready, 2: waiter registered
};

/// Awaits the result of a spawn_blocking call.
template <class R>
struct blocking_awaiter {
  std::shared_ptr<blocking_state<R>> st;
  bool await_ready() const noexcept { return st->state.load(std::memory_order_acquire) & 1; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    st->waiter = &h.promise();
    // ordering: release publishes waiter; acquire sees the result if it was already set.
    return (st->state.fetch_or(2, std::memory_order_acq_rel) & 1) == 0;
  }
  R await_resume() {
    // lifetime: move the exception out, so the blocking thread (which may drop the last
    // reference to the state) never frees it while the awaiter still reads it.
    if (st->result->m_exception)
      std::rethrow_exception(std::exchange(st->result->m_exception, nullptr));
    return st->result->take();
  }
};

}  // namespace detail

template <class T>
T thread_pool::block_on(task<T> t) {
  if (on_worker_thread())
    detail::die_block_on_from_worker();
  detail::block_on_state<T> st;
  join_handle<void> h = spawn(detail::pool_block_on_driver<T>(std::move(t), st));
  detail::futex_wait_while_zero(&st.done);
  return st.result->take();
}

namespace detail {
template <class R>
task<R> await_blocking(std::shared_ptr<blocking_state<R>> st) {
  // A named awaiter: g++ 12 destroys an aggregate temporary in a co_await operand twice.
  blocking_awaiter<R> awaiter{std::move(st)};
  co_return co_await awaiter;
}
}  // namespace detail

template <class F>
auto thread_pool::spawn_blocking(F fn) -> task<std::invoke_result_t<F&>> {
  // Not a coroutine itself: the call is handed to the blocking pool now, and the returned
  // task only awaits its result.
  using R = std::invoke_result_t<F&>;
  auto st = std::make_shared<detail::blocking_state<R>>();
  st->result.emplace();
  run_blocking([st, fn = std::move(fn)]() mutable {
    try {
      if constexpr (std::is_void_v<R>)
        fn();
      else
        st->result->return_value(fn());
    } catch (...) {
      st->result->m_exception = std::current_exception();
    }
    // ordering: release publishes the result; acquire sees a registered waiter.
    if (st->state.fetch_or(1, std::memory_order_acq_rel) & 2)
      st->waiter->wake();
  });
  return detail::await_blocking<R>(std::move(st));
}

}  // namespace saturn
