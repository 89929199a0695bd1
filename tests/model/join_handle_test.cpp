// The join-handle protocol: a spawned task's end (task.hpp, final_awaiter::await_suspend)
// against its join_handle being awaited (join_handle.hpp, awaiter) or dropped (detach()),
// all through promise_base::m_join. The coroutine machinery cannot run here (a task needs
// a runtime and the saturn library, built with the real atomics), so each side is
// transcribed step by step onto the real m_join bits: keep them in step with those files.
// The frame is a plain object whose every access checks it was not destroyed yet. Its
// plain fields shared by two threads (the result, m_continuation) are scheduling points
// too (plain_read / plain_write, as loom's UnsafeCell), so the checker can run the other
// thread between a plain access and an atomic one.
//
// The properties: the frame is destroyed exactly once; a joined task's result is taken
// exactly once, and its joiner continues exactly once (inline or resumed by the task);
// nothing touches the frame after it was destroyed.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "checker.hpp"
#include "saturn/detail/atomic.hpp"
#include "saturn/task/detail/promise_base.hpp"

namespace {

using namespace saturn;
using detail::join_complete;
using detail::join_detached;
using detail::join_sited;
using detail::join_spawned;
using detail::join_waiting;

/// Switches that turn the transcription into a mutant.
struct variant {
  bool complete_with_one_rmw = true;      ///< the task sets join_complete with fetch_or
  bool continuation_before_flag = true;   ///< the joiner writes m_continuation, then sets join_waiting
};

struct frame_model {
  variant v;
  // The promise's fields the protocol touches.
  detail::atomic<std::uint32_t> m_join{join_spawned | join_sited};  // as prepare_spawn
  int m_continuation = 0;  // 0: none; 1: the joiner
  int result = 0;
  // What happened (one model thread runs at a time: plain ints).
  int destroyed = 0;
  int taken = 0;
  int joiner_continued = 0;

  void touch() { model::check(destroyed == 0, "the frame was used after it was destroyed"); }
  int plain_read(const int& field) {
    model::point("plain read");
    touch();
    return field;
  }
  void plain_write(int& field, int value) {
    model::point("plain write");
    touch();
    field = value;
  }
  void destroy() {
    touch();
    ++destroyed;
  }

  /// The joiner's await_resume: take the result, destroy the frame, continue.
  void joiner_resume() {
    touch();
    model::check(plain_read(result) == 42, "the joiner took a result that was not stored");
    ++taken;
    destroy();
    ++joiner_continued;
  }

  /// The task's body ends: store the result, then final_awaiter::await_suspend.
  void task_finishes() {
    plain_write(result, 42);
    std::uint32_t old;
    if (v.complete_with_one_rmw) {
      old = m_join.fetch_or(join_complete, std::memory_order_acq_rel);
    } else {
      old = m_join.load(std::memory_order_acquire);
      m_join.store(old | join_complete, std::memory_order_release);
    }
    if (old & join_detached) {
      destroy();
      return;
    }
    if (old & join_waiting) {
      model::check(plain_read(m_continuation) == 1, "the task resumed a continuation that was not written");
      joiner_resume();  // returning m_continuation from await_suspend resumes the joiner here
    }
  }

  /// `co_await std::move(handle)`: await_ready, await_suspend, await_resume.
  void joiner_awaits() {
    touch();
    if (m_join.load(std::memory_order_acquire) & join_complete) {  // await_ready
      joiner_resume();
      return;
    }
    std::uint32_t old;
    if (v.continuation_before_flag) {
      plain_write(m_continuation, 1);
      old = m_join.fetch_or(join_waiting, std::memory_order_acq_rel);
    } else {
      old = m_join.fetch_or(join_waiting, std::memory_order_acq_rel);
      plain_write(m_continuation, 1);
    }
    if (old & join_complete)
      joiner_resume();  // await_suspend returned false: continue inline
    // else suspended: the task resumes us
  }

  /// ~join_handle: detach().
  void handle_dropped() {
    touch();
    const std::uint32_t old = m_join.fetch_or(join_detached, std::memory_order_acq_rel);
    if (old & join_complete)
      destroy();
  }
};

model::report check_protocol(variant v, bool join, int bound) {
  model::options opt;
  opt.preemption_bound = bound;
  return model::explore(opt, [&](model::execution& ex) {
    auto f = std::make_shared<frame_model>();
    f->v = v;
    ex.spawn([f] { f->task_finishes(); });
    if (join)
      ex.spawn([f] { f->joiner_awaits(); });
    else
      ex.spawn([f] { f->handle_dropped(); });
    if (!ex.run())
      return;
    model::check(f->destroyed == 1, f->destroyed == 0 ? "the frame was never destroyed (a leak)"
                                                      : "the frame was destroyed twice");
    if (join) {
      model::check(f->taken == 1, "the result was not taken exactly once");
      model::check(f->joiner_continued == 1, "the joiner did not continue exactly once");
    }
  });
}

void print(const char* name, const model::report& r) {
  std::printf("%s: %zu executions, up to %zu scheduling points each, %s\n", name, r.executions, r.max_depth,
              r.ok ? (r.complete ? "bound explored" : "INCOMPLETE") : r.failure.c_str());
  if (!r.ok)
    std::printf("the failing schedule, thread by thread:\n%s\n", r.schedule.c_str());
}

TEST(ModelJoinHandle, JoinVsCompletionBound3) {
  const auto r = check_protocol({}, true, 3);
  print("join vs completion", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelJoinHandle, DetachVsCompletionBound3) {
  const auto r = check_protocol({}, false, 3);
  print("detach vs completion", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelJoinHandleMutant, CompleteAsLoadThenStoreIsCaught) {
  variant v;
  v.complete_with_one_rmw = false;
  for (bool join : {true, false}) {
    const auto r = check_protocol(v, join, 2);
    print(join ? "mutant: complete as load + store, joined" : "mutant: complete as load + store, detached", r);
    ASSERT_FALSE(r.ok) << (join ? "joined" : "detached");
  }
}

TEST(ModelJoinHandleMutant, ContinuationAfterFlagIsCaught) {
  variant v;
  v.continuation_before_flag = false;
  const auto r = check_protocol(v, true, 2);
  print("mutant: m_continuation written after join_waiting", r);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure, "the task resumed a continuation that was not written");
}

}  // namespace
