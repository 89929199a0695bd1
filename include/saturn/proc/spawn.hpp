/// \file
/// spawn_process: start a process on a runtime or thread_pool and get its pid.
///
/// ```
/// auto p = saturn::spawn_process(body, arg1, arg2);          // from inside a runtime
/// auto q = saturn::spawn_process(pool, body, arg1);          // from any thread
/// auto r = saturn::spawn_process(pool, {.mailbox_capacity = 64}, body);  // bounded
/// ```
#pragma once

#include <saturn/proc/process.hpp>
#include <saturn/sched/task_dump.hpp>
#include <saturn/task/scheduler.hpp>

#include <functional>
#include <stdexcept>
#include <type_traits>

namespace saturn {

/// Options of spawn_process.
struct spawn_options {
  /// 0: unbounded mailbox. Otherwise send_wait() to this process waits while this many
  /// messages are queued (backpressure); plain send() never waits but is counted.
  std::uint32_t mailbox_capacity = 0;
};

namespace detail {

template <class F>
struct owned_callable final : owned_base {
  F m_fn;
  explicit owned_callable(F&& f) : m_fn(std::move(f)) {}
};

template <class F, class... Args>
using process_of = std::invoke_result_t<F&, Args...>;

template <class Msg>
pid_of<Msg> start_process(scheduler& s, const spawn_options& o, std::coroutine_handle<process_promise<Msg>> h,
                          owned_base* owned) {
  process_promise<Msg>& p = h.promise();
  p.m_ctx = &s.root_context();
  // ordering: relaxed; s.spawn below hands the promise over (the dump reads it paused).
  p.m_join.store(join_process, std::memory_order_relaxed);
  try {
    p.m_self = slot_acquire(&p);
    if (owned != nullptr)
      aux_of(p.slot_of())->m_owned = owned;  // before the pid is published: no lock needed
    if (o.mailbox_capacity != 0) {
      make_bounded(p.m_self, o.mailbox_capacity);
      p.m_bounded = true;
    }
  } catch (...) {
    owned_base* back = owned;
    if (p.m_self.valid()) {
      if (owned_base* o2 = p.end(exit_reason{}, false))
        back = o2;
    }
    h.destroy();
    delete back;
    throw;
  }
  const pid self = p.m_self;
  s.spawn(&p);  // lifetime: from here the process may run, end and free its frame
  return pid_of<Msg>::unchecked(self);
}

}  // namespace detail

/// Starts `fn(args...)` (which must return process<Msg>) as a process on scheduler `s`
/// (a runtime or thread_pool). The arguments are copied into the coroutine as usual; a
/// callable with state (a lambda with captures) is kept alive by the process until it
/// ends. Returns at once: the process runs when the scheduler gets to it. Any thread.
/// Throws std::length_error if the pid table is full (64 Mi processes).
template <class F, class... Args>
auto spawn_process(scheduler& s, const spawn_options& o, F&& fn, Args&&... args)
    -> pid_of<typename detail::process_of<std::decay_t<F>, Args...>::message_type> {
  using fn_t = std::decay_t<F>;
  using msg_t = typename detail::process_of<fn_t, Args...>::message_type;
  if constexpr (std::is_empty_v<fn_t> || std::is_pointer_v<fn_t> || std::is_function_v<std::remove_reference_t<F>>) {
    // lifetime: nothing to keep: the callable has no state the coroutine could refer to.
    auto h = std::invoke(fn, std::forward<Args>(args)...).release();
    return detail::start_process<msg_t>(s, o, h, nullptr);
  } else {
    auto* owned = new detail::owned_callable<fn_t>(fn_t(std::forward<F>(fn)));
    std::coroutine_handle<detail::process_promise<msg_t>> h;
    try {
      h = std::invoke(owned->m_fn, std::forward<Args>(args)...).release();
    } catch (...) {
      delete owned;
      throw;
    }
    return detail::start_process<msg_t>(s, o, h, owned);
  }
}

/// spawn_process on `s` with default options.
template <class F, class... Args>
  requires(!std::is_same_v<std::remove_cvref_t<F>, spawn_options>)
auto spawn_process(scheduler& s, F&& fn, Args&&... args) {
  return spawn_process(s, spawn_options{}, std::forward<F>(fn), std::forward<Args>(args)...);
}

/// spawn_process on the scheduler of the calling thread (a runtime's thread, a pool's
/// worker). Throws std::logic_error elsewhere.
template <class F, class... Args>
  requires(!std::is_base_of_v<scheduler, std::remove_cvref_t<F>>)
auto spawn_process(F&& fn, Args&&... args) {
  scheduler* s = scheduler::current();
  if (s == nullptr)
    throw std::logic_error("saturn: spawn_process without a scheduler: call it inside a runtime or pool, or pass one");
  return spawn_process(*s, spawn_options{}, std::forward<F>(fn), std::forward<Args>(args)...);
}

}  // namespace saturn
