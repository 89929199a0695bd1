/// \file
/// `stop_scope`: the cancellation domain of a structured-concurrency scope (when_all,
/// when_any, task_group). It owns a std::stop_source chained to the parent's token, and
/// the task_context its children run under: a stop of the parent reaches every child, and
/// the scope can stop its children without touching the parent.
#pragma once

#include <saturn/task/scheduler.hpp>

#include <optional>
#include <stop_token>

namespace saturn::detail {

/// A stop source chained to a parent context's token, plus the context for children.
///
/// Threading: construct and destroy on the scope's owning task. request_stop() and
/// stop_requested() may be called from any thread (std::stop_source is thread-safe); a
/// stop runs the children's stop callbacks on the requesting thread. Lifetime: lives in
/// the scope's coroutine frame, which outlives every child (structured concurrency).
class stop_scope {
 public:
  /// Chains to `parent.token`: if the parent is already stopped, so is this scope.
  /// Children inherit the parent's live-task table (falling back to the scheduler's root
  /// one), so what they spawn is tracked like any spawned task.
  explicit stop_scope(const task_context& parent)
      : m_ctx{parent.sched, m_source.get_token(),
              parent.live != nullptr ? parent.live : parent.sched->root_context().live} {
    if (parent.token.stop_possible())
      m_chain.emplace(parent.token, forward{&m_source});
  }
  stop_scope(const stop_scope&) = delete;
  stop_scope& operator=(const stop_scope&) = delete;

  /// The context children run under (the parent's scheduler, this scope's token).
  const task_context& context() const noexcept { return m_ctx; }
  task_context& context() noexcept { return m_ctx; }

  /// Stops every child (their awaits end with std::errc::operation_canceled). Idempotent.
  void request_stop() noexcept { m_source.request_stop(); }
  bool stop_requested() const noexcept { return m_source.stop_requested(); }
  std::stop_token token() const noexcept { return m_source.get_token(); }

 private:
  struct forward {
    std::stop_source* m_target;
    void operator()() const noexcept { m_target->request_stop(); }
  };

  std::stop_source m_source;
  task_context m_ctx;
  // lifetime: declared last, destroyed first: the parent's callback is unregistered (and,
  // if it runs on another thread, waited for) before m_source goes away.
  std::optional<std::stop_callback<forward>> m_chain;
};

}  // namespace saturn::detail
