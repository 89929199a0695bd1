// The single-threaded runtime: one loop, the live-task table, block_on's run loop.
#include <saturn/task/runtime.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "loop/current_loop.hpp"

namespace saturn {
namespace {
thread_local scheduler* t_current_scheduler = nullptr;
}

scheduler* scheduler::current() noexcept { return t_current_scheduler; }
scheduler* scheduler::set_current(scheduler* s) noexcept { return std::exchange(t_current_scheduler, s); }

namespace detail {
task_context& calling_root_context(const char* op) {
  scheduler* s = t_current_scheduler;
  if (s == nullptr) [[unlikely]]
    throw std::logic_error(std::string("saturn::") + op +
                           ": the calling thread runs no saturn scheduler; call it from a saturn task (or a "
                           "thread of a runtime or pool), or from other threads name the scheduler: "
                           "pool.spawn(t), pool.spawn_on(worker, t), rt.spawn(t)");
  return s->root_context();
}

void report_detached_exception(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "saturn: a detached task ended with an exception nobody awaited: %s\n", ex.what());
  } catch (...) {
    std::fprintf(stderr, "saturn: a detached task ended with a non-std exception nobody awaited\n");
  }
}
}  // namespace detail

runtime::runtime(const runtime_options& opts) : m_loop(opts.loop) {
  m_root.sched = this;
  m_root.live = &m_live;
  m_prev = set_current(this);
  m_stats_id = detail::register_runtime_stats(*this);
}

runtime::~runtime() {
  detail::unregister_runtime_stats(*this);  // first: no metrics reader looks at the loop from here on
  // 1. Every operation in the kernel completes (cancelled) while the frames it points
  //    into are alive; queued tasks are discarded (spawned ones abandoned).
  m_loop.shutdown();
  // 2. Abandon what is still suspended (on timers, events, joins...). Destroying one
  //    frame may destroy join handles and so free other finished tasks; unfinished ones
  //    stay in the table until popped here.
  while (!m_live.empty()) {
    detail::promise_base* p = m_live.back();
    p->m_fn(p, run_mode::discard);  // spawned_entry: remove from the table + abandon
  }
  m_loop.shutdown();
  // 3. Programs a throwing loop left suspended: nothing points into them any more.
  for (std::coroutine_handle<> h : m_unwound)
    h.destroy();
  m_loop.shutdown();  // what destroying them queued or cancelled
  set_current(m_prev);
}

void runtime::schedule(runnable* r) noexcept {
  if (t_current_scheduler == this)
    m_loop.post(r);
  else
    m_loop.post_remote(r);
}

void runtime::spawn_on(unsigned worker, runnable* r) {
  if (worker != 0)
    throw std::out_of_range("runtime::spawn_on: worker " + std::to_string(worker) +
                            " does not exist (a runtime has one, worker 0)");
  schedule(r);  // what scheduler::spawn does for a runtime
}

void runtime::run_until(const std::coroutine_handle<>& h) {
  // Two runtimes alive on one thread (each became current when it was made) may take
  // turns: while this one runs it is the thread's current scheduler and loop, or its
  // tasks' awaitables would submit to the other's ring and this loop would sleep forever
  // (two test files' static runtimes in one test binary did exactly that).
  struct current_guard {
    scheduler* sched;
    event_loop* loop;
    ~current_guard() {
      set_current(sched);
      detail::exchange_current_loop(loop);
    }
  } current{set_current(this), detail::exchange_current_loop(&m_loop)};
  m_loop.add_keep_alive();
  struct release {
    event_loop& l;
    ~release() { l.release_keep_alive(); }
  } guard{m_loop};
  // keep-alive: other threads may still wake the task; the loop sleeps, it does not return.
  while (!h.done())
    m_loop.run();
}

}  // namespace saturn
