// The model checker's scheduler and explorer (see checker.hpp for the method).
#include "checker.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace saturn::model {

namespace {

/// A decision with more than one option: which thread runs next.
struct choice {
  std::vector<int> options;  // thread ids; the default (no preemption) first
  std::size_t chosen = 0;
  bool costly = false;        // options past the first preempt the running thread
  int preemptions_before = 0;
};

enum class thread_state { ready, blocked, done };

struct thread_rec {
  std::function<void()> fn;
  thread_state state = thread_state::ready;
  const void* wait_addr = nullptr;
  std::uint64_t wait_seq = 0;
  std::thread th;
};

constexpr std::size_t k_max_threads = 8;
constexpr std::size_t k_max_log = 4000;

}  // namespace

struct context {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<thread_rec> threads;  // reserved up front: never reallocates while threads run
  int active = -1;                  // the thread holding the baton
  bool started = false;
  bool aborted = false;   // the execution failed: no thread runs any more
  bool finished = false;  // every thread ended
  std::vector<std::size_t> prefix;  // choices to replay
  std::vector<choice> trace;        // choices made in this execution
  int preemptions = 0;
  int bound = 0;
  std::size_t steps = 0;
  std::size_t max_steps = 0;
  std::uint64_t wait_counter = 0;
  std::string failure;
  std::vector<std::pair<int, const char*>> log;  // (thread, operation) at each point
};

namespace {

thread_local context* t_ctx = nullptr;
thread_local int t_id = -1;
context* g_controller = nullptr;  // the execution whose body is running (controller thread)

// lifetime: contexts of failed executions whose threads stay parked; a global root keeps
// them reachable (LeakSanitizer) for the life of the process.
std::mutex g_abandoned_mu;
std::vector<std::shared_ptr<context>> g_abandoned;

void fail_locked(context& c, std::string what) {
  if (c.failure.empty())
    c.failure = std::move(what);
  c.aborted = true;
  c.cv.notify_all();
}

/// The failed execution's thread stops here for good (its stack stays valid).
[[noreturn]] void park_forever(std::unique_lock<std::mutex>& lk) {
  for (;;)
    t_ctx->cv.wait(lk);
}

/// Picks the next thread to run after `cur` (-1: none yet) reached a point; -1 when none
/// can (all ended: finished; else deadlock or livelock: failed). Holds c.mu.
int decide(context& c, int cur, bool yielding) {
  if (++c.steps > c.max_steps) {
    fail_locked(c, "livelock: more than " + std::to_string(c.max_steps) + " scheduling points in one execution");
    return -1;
  }
  const int n = static_cast<int>(c.threads.size());
  const bool cur_ready = cur >= 0 && c.threads[cur].state == thread_state::ready;
  std::vector<int> opts;
  if (cur_ready && !yielding)
    opts.push_back(cur);
  for (int k = 1; k <= n; ++k) {
    const int j = ((cur < 0 ? n - 1 : cur) + k) % n;  // round robin from the next thread
    if (j != cur && c.threads[j].state == thread_state::ready)
      opts.push_back(j);
  }
  if (opts.empty() && cur_ready)
    opts.push_back(cur);  // a spin with nobody else to run
  if (opts.empty()) {
    bool all_done = true;
    std::string blocked;
    for (int j = 0; j < n; ++j) {
      if (c.threads[j].state != thread_state::done) {
        all_done = false;
        blocked += " T";
        blocked += std::to_string(j);
      }
    }
    if (all_done) {
      c.finished = true;
      c.cv.notify_all();
    } else {
      fail_locked(c, "deadlock: every thread left is blocked in futex_wait (a lost wake-up):" + blocked);
    }
    return -1;
  }
  std::size_t pick = 0;
  if (opts.size() > 1) {
    const std::size_t pos = c.trace.size();
    if (pos < c.prefix.size())
      pick = c.prefix[pos];
    if (pick >= opts.size()) {
      fail_locked(c, "model checker: replay diverged (the test is not deterministic)");
      return -1;
    }
    const bool costly = cur_ready && !yielding;
    c.trace.push_back(choice{std::move(opts), pick, costly, c.preemptions});
    if (costly && pick != 0)
      ++c.preemptions;
    return c.trace.back().options[pick];
  }
  return opts[0];
}

/// Hands the baton from `me` to `next` and waits to get it back.
void hand_off(context& c, std::unique_lock<std::mutex>& lk, int me, int next) {
  if (next == me)
    return;
  c.active = next;
  c.cv.notify_all();
  c.cv.wait(lk, [&] { return c.active == me || c.aborted; });
  if (c.aborted)
    park_forever(lk);
}

/// A scheduling point of thread t_id, holding c.mu.
void point_locked(context& c, std::unique_lock<std::mutex>& lk, const char* op, bool yielding) {
  if (c.log.size() < k_max_log)
    c.log.emplace_back(t_id, op);
  const int next = decide(c, t_id, yielding);
  if (next < 0)
    park_forever(lk);
  hand_off(c, lk, t_id, next);
}

void thread_main(const std::shared_ptr<context>& cp, int id) {
  context& c = *cp;
  t_ctx = &c;
  t_id = id;
  {
    std::unique_lock lk(c.mu);
    c.cv.wait(lk, [&] { return c.active == id || c.aborted; });
    if (c.aborted)
      return;  // never ran: nothing of it is left to abandon
  }
  c.threads[id].fn();
  std::unique_lock lk(c.mu);
  c.threads[id].state = thread_state::done;
  if (c.log.size() < k_max_log)
    c.log.emplace_back(id, "end");
  const int next = decide(c, id, false);
  if (next >= 0) {
    c.active = next;
    c.cv.notify_all();
  }
}

std::string format_schedule(const context& c) {
  std::string out;
  int last = -2;
  for (const auto& [t, op] : c.log) {
    if (t != last) {
      if (!out.empty())
        out += '\n';
      out += "  T";
      out += std::to_string(t);
      out += ':';
      last = t;
    }
    out += " ";
    out += op;
  }
  if (c.log.size() >= k_max_log)
    out += "\n  ... (log truncated)";
  return out;
}

/// The next schedule to run, depth first: the deepest choice with an untried option the
/// bound allows. False when there is none (the exploration is complete).
bool next_prefix(const context& c, int bound, std::vector<std::size_t>& prefix) {
  for (std::size_t k = c.trace.size(); k-- > 0;) {
    const choice& ch = c.trace[k];
    const std::size_t next = ch.chosen + 1;
    if (next >= ch.options.size())
      continue;
    if (ch.preemptions_before + (ch.costly ? 1 : 0) > bound)
      continue;
    prefix.clear();
    for (std::size_t i = 0; i < k; ++i)
      prefix.push_back(c.trace[i].chosen);
    prefix.push_back(next);
    return true;
  }
  return false;
}

}  // namespace

void execution::spawn(std::function<void()> f) {
  context& c = *m_ctx;
  if (c.started || c.threads.size() >= k_max_threads) {
    std::fprintf(stderr, "model: spawn after run() or more than %zu threads\n", k_max_threads);
    std::abort();
  }
  c.threads.emplace_back();
  c.threads.back().fn = std::move(f);
}

bool execution::run() {
  context& c = *m_ctx;
  c.started = true;
  for (std::size_t i = 0; i < c.threads.size(); ++i)
    c.threads[i].th = std::thread(thread_main, m_ctx, static_cast<int>(i));
  {
    std::unique_lock lk(c.mu);
    const int first = decide(c, -1, false);
    if (first >= 0) {
      c.active = first;
      c.cv.notify_all();
    }
    c.cv.wait(lk, [&] { return c.finished || c.aborted; });
  }
  bool abandoned = false;
  for (auto& t : c.threads) {
    // A thread not done may be parked for good (failed execution): let it be.
    bool done;
    {
      std::lock_guard lk(c.mu);
      done = t.state == thread_state::done;
    }
    if (done || !c.aborted) {
      t.th.join();
    } else {
      t.th.detach();
      abandoned = true;
    }
  }
  if (abandoned) {
    std::lock_guard lk(g_abandoned_mu);
    g_abandoned.push_back(m_ctx);
  }
  return !c.aborted;
}

report explore(const options& opt, const std::function<void(execution&)>& body) {
  report r;
  std::vector<std::size_t> prefix;
  for (;;) {
    auto c = std::make_shared<context>();
    c->threads.reserve(k_max_threads);
    c->prefix = prefix;
    c->bound = opt.preemption_bound;
    c->max_steps = opt.max_steps;
    g_controller = c.get();
    {
      execution ex(c);
      body(ex);
    }
    g_controller = nullptr;
    ++r.executions;
    r.max_depth = std::max(r.max_depth, c->steps);
    if (!c->failure.empty()) {
      r.ok = false;
      r.failure = c->failure;
      r.schedule = format_schedule(*c);
      return r;
    }
    if (!next_prefix(*c, opt.preemption_bound, prefix)) {
      r.complete = true;
      return r;
    }
    if (r.executions >= opt.max_executions)
      return r;
  }
}

void point(const char* op) noexcept {
  context* c = t_ctx;
  if (c == nullptr)
    return;
  std::unique_lock lk(c->mu);
  point_locked(*c, lk, op, false);
}

void yield() noexcept {
  context* c = t_ctx;
  if (c == nullptr)
    return;
  std::unique_lock lk(c->mu);
  point_locked(*c, lk, "spin", true);
}

void futex_wait(const void* addr, const std::function<bool()>& still_blocked) noexcept {
  context* cp = t_ctx;
  if (cp == nullptr)
    return;  // outside a model thread: a spurious wake-up (callers re-check)
  context& c = *cp;
  std::unique_lock lk(c.mu);
  point_locked(c, lk, "futex_wait", false);
  if (!still_blocked())
    return;
  thread_rec& me = c.threads[t_id];
  me.state = thread_state::blocked;
  me.wait_addr = addr;
  me.wait_seq = ++c.wait_counter;
  if (c.log.size() < k_max_log)
    c.log.emplace_back(t_id, "(sleeps)");
  const int next = decide(c, t_id, false);  // free: we cannot go on
  if (next < 0)
    park_forever(lk);
  hand_off(c, lk, t_id, next);
}

int futex_wake(const void* addr, int count) noexcept {
  context* cp = t_ctx;
  if (cp == nullptr)
    return 0;
  context& c = *cp;
  std::unique_lock lk(c.mu);
  point_locked(c, lk, "futex_wake", false);
  int woken = 0;
  while (woken < count) {
    thread_rec* first = nullptr;  // FIFO among the waiters on addr
    for (auto& t : c.threads) {
      if (t.state == thread_state::blocked && t.wait_addr == addr && (first == nullptr || t.wait_seq < first->wait_seq))
        first = &t;
    }
    if (first == nullptr)
      break;
    first->state = thread_state::ready;
    first->wait_addr = nullptr;
    ++woken;
  }
  return woken;
}

void check(bool cond, const char* what) noexcept {
  if (cond)
    return;
  if (context* c = t_ctx) {
    std::unique_lock lk(c->mu);
    if (c->log.size() < k_max_log)
      c->log.emplace_back(t_id, "CHECK FAILED");
    fail_locked(*c, what);
    park_forever(lk);
  }
  if (context* c = g_controller) {
    std::lock_guard lk(c->mu);
    if (c->failure.empty())
      c->failure = what;
    return;
  }
  std::fprintf(stderr, "model::check outside an exploration failed: %s\n", what);
  std::abort();
}

}  // namespace saturn::model
