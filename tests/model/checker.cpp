// The model checker's scheduler and explorer (see checker.hpp for the method).
#include "checker.hpp"

#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SATURN_MODEL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SATURN_MODEL_ASAN 1
#endif
#endif
#if defined(SATURN_MODEL_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

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

constexpr std::size_t k_max_threads = 8;
constexpr std::size_t k_max_log = 4000;
constexpr std::size_t k_stack_size = 256 * 1024;

/// A fiber stack. malloc'd, not mmap'd: LeakSanitizer scans a reachable heap block, so
/// what an abandoned fiber's frames point to is not reported as leaked.
struct stack_block {
  std::unique_ptr<char[]> bytes{new char[k_stack_size]};
};

// Stacks of finished executions, reused (allocating 256 KiB per fiber per run costs more
// than the run). Model tests run on one thread.
std::vector<std::unique_ptr<stack_block>> g_free_stacks;

std::unique_ptr<stack_block> take_stack() {
  if (g_free_stacks.empty())
    return std::make_unique<stack_block>();
  auto s = std::move(g_free_stacks.back());
  g_free_stacks.pop_back();
  return s;
}

struct thread_rec {
  std::function<void()> fn;
  thread_state state = thread_state::ready;
  bool spinning = false;  // spun (cpu_relax) and nothing changed in memory since
  std::uint64_t relax_epoch = ~std::uint64_t{0};  // c.epoch at its last cpu_relax
  const void* wait_addr = nullptr;
  std::uint64_t wait_seq = 0;
  std::unique_ptr<stack_block> stack;
  ucontext_t uc{};
};

}  // namespace

struct context {
  std::vector<thread_rec> threads;  // reserved up front: never reallocates while fibers run
  ucontext_t controller{};
  int active = -1;        // the fiber running, -1: the controller
  int next = -1;          // the fiber the controller resumes next
  bool started = false;
  bool aborted = false;   // the execution failed: no fiber runs any more
  bool finished = false;  // every fiber ended
  std::vector<std::size_t> prefix;  // choices to replay
  std::vector<choice> trace;        // choices made in this execution
  int preemptions = 0;
  int bound = 0;
  std::size_t steps = 0;
  std::size_t max_steps = 0;
  std::uint64_t wait_counter = 0;
  std::uint64_t epoch = 0;  // changing writes so far
  std::string failure;
  std::vector<std::pair<int, const char*>> log;  // (thread, operation) at each point
#if defined(SATURN_MODEL_ASAN)
  const void* controller_stack_bottom = nullptr;
  std::size_t controller_stack_size = 0;
#endif
};

namespace {

context* g_ctx = nullptr;         // the execution running (fibers and controller alike)
context* g_controller = nullptr;  // the execution whose body is running

// lifetime: contexts of failed executions, whose fibers are never resumed: kept for the
// life of the process (their stacks may hold the only pointers to what the fibers had).
std::vector<std::shared_ptr<context>> g_abandoned;

void fail(context& c, std::string what) {
  if (c.failure.empty())
    c.failure = std::move(what);
  c.aborted = true;
}

void log_op(context& c, int t, const char* op) {
  if (c.log.size() < k_max_log)
    c.log.emplace_back(t, op);
}

/// Picks the next fiber to run after `cur` (-1: none yet) reached a point; -1 when none
/// can (all ended: finished; else deadlock or livelock: failed).
int decide(context& c, int cur, bool yielding) {
  if (++c.steps > c.max_steps) {
    fail(c, "livelock: more than " + std::to_string(c.max_steps) + " scheduling points in one execution");
    return -1;
  }
  const int n = static_cast<int>(c.threads.size());
  // A spinning thread waits for memory to change: it runs again only after another
  // thread changed a value, or when no other thread can run.
  bool any_eligible = false;
  for (const auto& t : c.threads)
    any_eligible = any_eligible || (t.state == thread_state::ready && !t.spinning);
  auto eligible = [&](int j) {
    return c.threads[j].state == thread_state::ready && (!c.threads[j].spinning || !any_eligible);
  };
  const bool cur_ready = cur >= 0 && eligible(cur);
  std::vector<int> opts;
  if (cur_ready && !yielding)
    opts.push_back(cur);
  for (int k = 1; k <= n; ++k) {
    const int j = ((cur < 0 ? n - 1 : cur) + k) % n;  // round robin from the next thread
    if (j != cur && eligible(j))
      opts.push_back(j);
  }
  if (opts.empty() && cur_ready)
    opts.push_back(cur);  // a spin with nobody else to run
  if (opts.empty()) {
    std::string blocked;
    for (int j = 0; j < n; ++j) {
      if (c.threads[j].state != thread_state::done) {
        blocked += " T";
        blocked += std::to_string(j);
      }
    }
    if (blocked.empty())
      c.finished = true;
    else
      fail(c, "deadlock: every thread left is blocked in futex_wait (a lost wake-up):" + blocked);
    return -1;
  }
  if (opts.size() == 1)
    return opts[0];
  std::size_t pick = 0;
  const std::size_t pos = c.trace.size();
  if (pos < c.prefix.size())
    pick = c.prefix[pos];
  if (pick >= opts.size()) {
    fail(c, "model checker: replay diverged (the test is not deterministic)");
    return -1;
  }
  const bool costly = cur_ready && !yielding;
  c.trace.push_back(choice{std::move(opts), pick, costly, c.preemptions});
  if (costly && pick != 0)
    ++c.preemptions;
  return c.trace.back().options[pick];
}

/// Switches from the running fiber to the controller; `dying`: never to come back.
void to_controller(context& c, int me, bool dying) {
  thread_rec& t = c.threads[me];
#if defined(SATURN_MODEL_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(dying ? nullptr : &fake, c.controller_stack_bottom, c.controller_stack_size);
  swapcontext(&t.uc, &c.controller);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)dying;
  swapcontext(&t.uc, &c.controller);
#endif
}

/// Runs fiber `id` until it switches back (controller only).
void resume(context& c, int id) {
  thread_rec& t = c.threads[id];
  c.active = id;
#if defined(SATURN_MODEL_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, t.stack->bytes.get(), k_stack_size);
  swapcontext(&c.controller, &t.uc);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  swapcontext(&c.controller, &t.uc);
#endif
  c.active = -1;
}

/// After `me` made a decision: go on (next == me) or let the controller run `next`.
/// A fiber of a failed execution (next < 0 and aborted) is never resumed.
void switch_after(context& c, int me, int next) {
  if (next == me)
    return;
  c.next = next;
  to_controller(c, me, false);
}

/// A scheduling point of the running fiber.
void point_in(context& c, const char* op, bool yielding) {
  const int me = c.active;
  log_op(c, me, op);
  switch_after(c, me, decide(c, me, yielding));
}

void fiber_main() {
  context& c = *g_ctx;
  const int me = c.active;
#if defined(SATURN_MODEL_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &c.controller_stack_bottom, &c.controller_stack_size);
#endif
  c.threads[me].fn();
  c.threads[me].state = thread_state::done;
  log_op(c, me, "end");
  c.next = decide(c, me, false);
  to_controller(c, me, true);
  std::abort();  // never resumed
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
    out += ' ';
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
  for (auto& t : c.threads) {
    t.stack = take_stack();
    getcontext(&t.uc);
    t.uc.uc_stack.ss_sp = t.stack->bytes.get();
    t.uc.uc_stack.ss_size = k_stack_size;
    t.uc.uc_link = nullptr;
    makecontext(&t.uc, fiber_main, 0);
  }
  g_ctx = &c;
  c.next = decide(c, -1, false);
  while (c.next >= 0 && !c.aborted)
    resume(c, c.next);
  g_ctx = nullptr;
  if (c.aborted) {
    g_abandoned.push_back(m_ctx);  // its fibers' stacks stay as they are
    return false;
  }
  for (auto& t : c.threads)
    g_free_stacks.push_back(std::move(t.stack));
  return true;
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
  if (context* c = g_ctx; c != nullptr && c->active >= 0)
    point_in(*c, op, false);
}

void yield() noexcept {
  context* c = g_ctx;
  if (c == nullptr || c->active < 0)
    return;
  thread_rec& t = c->threads[c->active];
  if (t.relax_epoch != c->epoch) {
    // Memory changed since this thread's last spin (or it is the first): a retry may see
    // something new, so this is an ordinary point (a lost CAS race is retried in every way).
    t.relax_epoch = c->epoch;
    point_in(*c, "relax", false);
    return;
  }
  // A second spin with nothing changed: wait for a change.
  t.spinning = true;
  point_in(*c, "spin", true);
  t.spinning = false;
}

void wrote(bool changed) noexcept {
  context* c = g_ctx;
  if (c == nullptr || c->active < 0 || !changed)
    return;
  ++c->epoch;
  for (auto& t : c->threads)
    t.spinning = false;
}

void futex_wait(const void* addr, const std::function<bool()>& still_blocked) noexcept {
  context* cp = g_ctx;
  if (cp == nullptr || cp->active < 0)
    return;  // outside a model thread: a spurious wake-up (callers re-check)
  context& c = *cp;
  point_in(c, "futex_wait", false);
  if (!still_blocked())
    return;
  const int me = c.active;
  thread_rec& t = c.threads[me];
  t.state = thread_state::blocked;
  t.wait_addr = addr;
  t.wait_seq = ++c.wait_counter;
  log_op(c, me, "(sleeps)");
  c.next = decide(c, me, false);  // free: we cannot go on
  to_controller(c, me, false);    // back here once woken and picked
}

int futex_wake(const void* addr, int count) noexcept {
  context* cp = g_ctx;
  if (cp == nullptr || cp->active < 0)
    return 0;
  context& c = *cp;
  point_in(c, "futex_wake", false);
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
  if (context* c = g_ctx; c != nullptr && c->active >= 0) {
    log_op(*c, c->active, "CHECK FAILED");
    fail(*c, what);
    to_controller(*c, c->active, false);  // never resumed
    std::abort();
  }
  if (context* c = g_controller) {
    if (c->failure.empty())
      c->failure = what;
    return;
  }
  std::fprintf(stderr, "model::check outside an exploration failed: %s\n", what);
  std::abort();
}

}  // namespace saturn::model
