// os::graceful_stop: two groups of spawned tasks (acceptors, work), each under its own
// stop source and counted by a wait_group; stop() runs the three steps of the header.
#include <saturn/os/graceful.hpp>

#include <saturn/detail/atomic.hpp>
#include <saturn/os/signal.hpp>
#include <saturn/sync/wait_group.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/time.hpp>
#include <saturn/task/when_any.hpp>

#include <stop_token>
#include <utility>

namespace saturn::os {

struct graceful_stop::state {
  explicit state(scheduler& s)
      : acceptor_ctx{&s, acceptor_stop.get_token(), s.root_context().live},
        work_ctx{&s, work_stop.get_token(), s.root_context().live} {}

  std::stop_source acceptor_stop, work_stop;
  task_context acceptor_ctx, work_ctx;
  wait_group acceptors, work;
  saturn::detail::atomic<bool> stopping{false};
  saturn::detail::atomic<std::size_t> failed{0};
};

namespace {

using state_ptr = std::shared_ptr<graceful_stop::state>;

// The state is held by every task, so done() — the last touch — cannot outlive it.
task<void> run_counted(state_ptr s, task<void> t, bool is_work) {
  try {
    co_await std::move(t);
  } catch (...) {
    // A failing connection is dropped, not the server: count it for the report.
    s->failed.fetch_add(1, std::memory_order_relaxed);
  }
  (is_work ? s->work : s->acceptors).done();
}

/// Starts `t` on `worker` in its group (acceptors or work), counted; throws
/// std::out_of_range, uncounted, when there is no such worker.
void spawn_counted_on(const state_ptr& sp, unsigned worker, task<void> t, bool is_work) {
  wait_group& wg = is_work ? sp->work : sp->acceptors;
  wg.add(1);
  try {
    spawn_in(is_work ? sp->work_ctx : sp->acceptor_ctx, worker, run_counted(sp, std::move(t), is_work)).detach();
  } catch (...) {
    wg.done();
    throw;
  }
}

task<result<void>> wait_all(wait_group& wg) {
  auto w = co_await wg.wait();
  co_return static_cast<result<void>>(w);
}

task<result<void>> sleep_task(std::chrono::milliseconds d) { co_return co_await saturn::sleep_for(d); }

}  // namespace

graceful_stop::graceful_stop(scheduler& sched) : m_state(std::make_shared<state>(sched)) {}

graceful_stop::~graceful_stop() = default;

void graceful_stop::spawn_acceptor(task<void> t) {
  state& s = *m_state;
  s.acceptors.add(1);
  spawn_in(s.acceptor_ctx, run_counted(m_state, std::move(t), false)).detach();
}

void graceful_stop::spawn_acceptor_on(unsigned worker, task<void> t) { spawn_counted_on(m_state, worker, std::move(t), false); }

void graceful_stop::spawn(task<void> t) {
  state& s = *m_state;
  s.work.add(1);
  spawn_in(s.work_ctx, run_counted(m_state, std::move(t), true)).detach();
}

void graceful_stop::spawn_on(unsigned worker, task<void> t) { spawn_counted_on(m_state, worker, std::move(t), true); }

bool graceful_stop::stopping() const noexcept { return m_state->stopping.load(std::memory_order_acquire); }

task<stop_report> graceful_stop::stop(std::chrono::milliseconds deadline) {
  state_ptr s = m_state;  // the frame keeps the state even if *this is moved from meanwhile
  const auto t0 = std::chrono::steady_clock::now();
  s->stopping.store(true, std::memory_order_release);
  stop_report rep;
  // 1. No new work: the acceptors end at their pending accept (cancelled).
  s->acceptor_stop.request_stop();
  (void)co_await s->acceptors.wait();
  // 2. The work in flight gets until the deadline.
  rep.in_flight = static_cast<std::size_t>(s->work.count());
  if (rep.in_flight != 0) {
    auto r = co_await when_any(wait_all(s->work), sleep_task(deadline));
    if (r.index() == 1) {
      // 3. Whatever is left is cancelled; its awaits end, so it ends soon.
      rep.cancelled = static_cast<std::size_t>(s->work.count());
      s->work_stop.request_stop();
    }
  }
  (void)co_await s->work.wait();
  // Work spawned from here on starts stopped (its context's token is stopped).
  s->work_stop.request_stop();
  rep.failed = s->failed.load(std::memory_order_relaxed);
  rep.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  co_return rep;
}

task<result<stop_report>> graceful_stop::stop_on_signals(std::initializer_list<int> signals,
                                                         std::chrono::milliseconds deadline) {
  auto set = signal_set::make(signals);
  if (!set)
    co_return set.err();
  auto sig = co_await set->wait();
  if (!sig)
    co_return sig.err();
  stop_report rep = co_await stop(deadline);
  rep.signal = *sig;
  co_return rep;
}

}  // namespace saturn::os
