#pragma once
// A small exhaustive-interleaving model checker (in the spirit of loom and CHESS) for the
// runtime's lock-free protocols.
//
// How it works
// ------------
// A model test is compiled with SATURN_INSTRUMENTED_ATOMICS, so saturn::detail::atomic
// is the wrapper in saturn_instrumented_atomic.hpp: every load, store, RMW and fence (and
// cpu_relax, futex_wait, futex_wake) first calls model::point(). The body of a test spawns
// a few model threads (fibers: ucontext, on the test's own OS thread) and calls
// execution::run(). Exactly one model thread runs at a time, and at each point the
// scheduler decides which one runs next. explore() runs the body again and again, each
// time with another schedule, depth first, until every schedule within the bound has run:
//  - Preemption bound (CHESS): switching away from a thread that could go on costs one
//    preemption; an execution has at most `preemption_bound`. Switches where the running
//    thread blocks (futex_wait) or ends are free. A thread that reaches cpu_relax a second
//    time with nothing changed in memory since the first spins: it lets another run for
//    free and is not run again until some value changed or nothing else can run, so a
//    spin-wait neither starves the thread it waits for nor spins forever. (Left out:
//    schedules where it spins again on unchanged memory; such a spin re-reads what it read.)
//  - Every decision is replayed from a recorded prefix, so each run is deterministic.
//  - A failed model::check, a deadlock (every thread left blocked in futex_wait: a lost
//    wake-up) or too many steps (a livelock) ends the exploration with the schedule that
//    led there, as the list of operations each thread ran between switches.
//
// What it does not model
// ----------------------
// Executions are sequentially consistent: every operation acts on one global memory in the
// order the scheduler runs them, whatever memory_order the code names. So the checker finds
// interleaving bugs (a missing re-check, a missing RMW, a wrong bound, a lost wake-up), not
// bugs that need a weaker ordering to show (a relaxed load where acquire is needed, a missing
// fence). Those are argued in the code's `// ordering:` comments and tested under TSan.
// Also: a plain (non-atomic) shared field is a scheduling point only where a model says
// so (model::point before it, as loom's UnsafeCell); a weak CAS never fails spuriously;
// futex_wake wakes the oldest waiter first; a timed futex_wait times out at once.
//
// The fibers of a failed execution are never resumed: their stacks and what their closures
// hold stay allocated for the life of the process. Keep a test's shared state in a
// std::shared_ptr captured by each thread (the body's own frame is gone by then).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace saturn::model {

/// Bounds of one exploration.
struct options {
  int preemption_bound = 2;                ///< preemptions per execution
  std::size_t max_steps = 20000;           ///< scheduling points per execution (livelock guard)
  std::size_t max_executions = 2'000'000;  ///< give up (complete = false) past this
};

/// The result of explore().
struct report {
  bool ok = true;               ///< no execution failed
  bool complete = false;        ///< every schedule within the bound was run
  std::size_t executions = 0;   ///< executions run (the failing one included)
  std::size_t max_depth = 0;    ///< most scheduling points seen in one execution
  std::string failure;          ///< what failed (empty when ok)
  std::string schedule;         ///< the failing execution, thread by thread
};

struct context;

/// One execution, handed to the body of explore(). Controller thread only.
class execution {
 public:
  explicit execution(std::shared_ptr<context> c) noexcept : m_ctx(std::move(c)) {}
  /// Adds a model thread (it starts at run()). At most 8; 256 KiB of stack each.
  void spawn(std::function<void()> f);
  /// Runs the model threads under this execution's schedule until they all end or the
  /// execution fails. Returns false on failure (the rest of the body should only return).
  bool run();

 private:
  std::shared_ptr<context> m_ctx;
};

/// Explores every schedule of `body` within `opt`'s bound. Stops at the first failure.
/// Call from a normal (non-model) thread; one exploration at a time.
report explore(const options& opt, const std::function<void(execution&)>& body);

/// A scheduling point, before an atomic operation named `op` (for the report). A no-op
/// outside a model thread (a test's setup and final checks run free).
void point(const char* op) noexcept;
/// cpu_relax. An ordinary point when some value changed since the thread's previous
/// cpu_relax (or there was none): a retry after a lost CAS race is explored at every
/// moment. Otherwise the thread spins on unchanged memory: it lets another thread run
/// (for free) and is not run again until some value changed or no other thread can run.
void yield() noexcept;
/// After a store or RMW: `changed` says whether it changed the value (ends spins).
void wrote(bool changed) noexcept;
/// Blocks the calling model thread on `addr` while `still_blocked()` (evaluated once,
/// at the point, holding the baton), until a futex_wake on `addr`. A scheduling point.
void futex_wait(const void* addr, const std::function<bool()>& still_blocked) noexcept;
/// Wakes up to `count` model threads blocked on `addr`; returns how many. A point.
int futex_wake(const void* addr, int count) noexcept;
/// Fails the execution with `what` when `cond` is false. In a model thread the thread
/// then stops (it is abandoned); in the body (after run()) the body goes on.
void check(bool cond, const char* what) noexcept;

}  // namespace saturn::model
