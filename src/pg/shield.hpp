// shield(t): awaits `t` under a context whose stop token never fires, so the steps that
// keep a connection in sync (finishing a send, sending CancelRequest, reading to
// ReadyForQuery) run to their end even when the calling task is being cancelled.
#pragma once

#include <saturn/task/await_under.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

namespace saturn::pg::detail {

template <class T>
task<T> shield(task<T> t) {
  task_context& parent = co_await this_task::context();
  task_context ctx{parent.sched, std::stop_token{}, parent.live};
  // A named awaiter: g++ 12 destroys an aggregate temporary in a co_await operand twice.
  auto child = await_under(t, ctx);
  if constexpr (std::is_void_v<T>) {
    co_await child;
  } else {
    co_return co_await child;
  }
}

}  // namespace saturn::pg::detail
