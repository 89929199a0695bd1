/// \file
/// A dump of the spawned tasks alive in every thread_pool: where each was spawned, how
/// long ago it started, the worker that recorded it, and what it is doing as far as the
/// runtime can tell at no cost to the hot path (waiting on a sync primitive, joining
/// another spawned task, suspended otherwise). `/debug/tasks` (http::add_debug_routes)
/// and the SIGUSR1 dump (dump_on_signal, saturn/os/task_dump_signal.hpp) render it.
///
/// ```cpp
/// saturn::task_dump d = saturn::dump_tasks();
/// std::fputs(saturn::render_task_dump(d).c_str(), stderr);
/// ```
///
/// The tasks are read from the pools' live-task tables (filled when a spawned task first
/// runs; the spawn site comes from spawn()'s std::source_location argument). To read a
/// task's state safely, the dump pauses every worker of a pool (each runs a pause point
/// that blocks until released), reads at most task_dump_options::batch tasks, releases
/// the workers, and repeats: the workers never stop longer than one batch takes. A worker
/// that does not reach its pause point in time (it runs a task that does not return) is
/// not waited for: that pool's tasks are then listed with their site and age only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <saturn/detail/spawn_site.hpp>
#include <string>
#include <vector>

namespace saturn {

/// What a suspended spawned task waits for, as far as the dump can tell.
enum class task_state : std::uint8_t {
  suspended,     ///< suspended (I/O, a timer, a child task) or queued to run
  waiting_sync,  ///< waiting on a sync primitive (event, mutex, semaphore, channel, oneshot)
  joining,       ///< awaiting another spawned task's join_handle (task_entry::awaits)
  finished,      ///< finished, its result not yet taken by its join_handle
  unknown,       ///< not read: its pool's workers were not paused (see the file comment)
};

/// The name of a state as the text dump shows it ("suspended", "waiting on a sync primitive"...).
const char* task_state_name(task_state s) noexcept;

/// What the dump read of a task that is a process body (saturn/proc), while its pool's
/// workers were paused. `valid` is false for other tasks and when the pool did not pause.
struct process_facts {
  bool valid = false;
  bool in_receive = false;       ///< suspended in receive, waiting for a message
  bool trap_exits = false;       ///< exit signals arrive as messages
  bool mailbox_capped = false;   ///< more messages were queued than were counted (mailbox_count_limit)
  std::uint32_t index = 0;       ///< its pid: index ...
  std::uint32_t generation = 0;  ///< ... and generation, shown as <index.generation>
  std::uint32_t mailbox = 0;     ///< queued: messages, exit signals and receive time-outs not yet received
  std::uint32_t capacity = 0;    ///< a bounded mailbox's capacity (0: unbounded)
  std::uint32_t links = 0;       ///< processes linked to it
  std::uint32_t monitors = 0;    ///< monitors watching it
};

/// One spawned task alive.
struct task_entry {
  unsigned pool = 0;             ///< pool_stats::id of its pool (0 for a runtime's task)
  /// runtime::stats_id() of the single-threaded runtime it runs on; ~0u for a pool's task.
  /// A runtime's tasks have no spawn site or age (its table keeps only the task).
  unsigned runtime = ~0u;
  unsigned worker = 0;           ///< the worker whose table recorded it (where it first ran); ~0u: outside any worker
  const void* task = nullptr;    ///< its coroutine frame (the address a debugger shows)
  const void* resume = nullptr;  ///< the frame's resume function (symbolize with addr2line); null when not read
  bool has_site = false;         ///< `site` is known (spawned through spawn(), pool.spawn(), spawn_in())
  saturn::spawn_site site{};   ///< where it was spawned
  std::uint64_t age_ns = 0;      ///< time since it first ran (coarse: a few milliseconds)
  task_state state = task_state::unknown;
  const void* awaits = nullptr;  ///< joining: the frame of the task it awaits
  process_facts process{};       ///< when the task is a process body
};

/// How to take a dump.
struct task_dump_options {
  std::size_t max_tasks = 100'000;  ///< stop after this many tasks (task_dump::truncated)
  /// A process's mailbox is counted (inside the pause) up to this many entries.
  std::uint32_t mailbox_count_limit = 10'000;
  std::uint32_t batch = 4'096;      ///< tasks read per pause of the workers
  /// How long to wait for every worker of a pool to reach its pause point.
  std::chrono::milliseconds pause_timeout{200};
};

/// A dump: the tasks and what taking it cost the workers.
struct task_dump {
  std::vector<task_entry> tasks;
  bool truncated = false;             ///< more tasks were alive than max_tasks
  unsigned pools = 0;                 ///< pools dumped
  std::size_t pauses = 0;             ///< times the workers were paused
  std::uint64_t longest_pause_ns = 0; ///< the longest of those pauses (all workers held)
  unsigned unpaused_pools = 0;        ///< pools whose workers did not all pause (state unknown)
  unsigned runtimes = 0;              ///< single-threaded runtimes looked at
  unsigned unpaused_runtimes = 0;     ///< runtimes that did not pause (their tasks are not listed)
};

/// Takes a dump of every live thread_pool and single-threaded runtime. Threading: any
/// thread, best from one that is not a worker (a worker calling it counts as paused
/// itself, and its pool's tasks wait while it reads); blocks (does not suspend) for as long
/// as the dump takes. Takes the locks pools and runtimes register under, so they are not
/// built or destroyed meanwhile. A runtime is paused like a worker, through its loop: one
/// that is not running (its thread is not inside block_on) does not pause within
/// pause_timeout and its tasks are not listed (its table may be changing), unless the
/// caller is that runtime's own thread.
task_dump dump_tasks(const task_dump_options& opts = {});

/// The dump as text, one task per line, oldest first, such as "task 0x7f20 pool 0 worker 1
/// age 12.345s waiting on a sync primitive spawned at src/a.cpp:42 (f)"; a process body
/// adds its pid and what its process_facts say ("process <12.1> in receive, mailbox 3,
/// 2 links, 1 monitor").
std::string render_task_dump(const task_dump& d);

namespace detail {
struct promise_base;
/// m_join bit of a process body's promise (set by spawn_process before it is handed to
/// a scheduler): the dump asks the process reader about it.
inline constexpr std::uint32_t join_process = 1u << 6;
/// Reads a paused process's facts (the process layer installs it). Called by the dumping
/// thread while every worker of the process's pool is paused; must not block on anything
/// a worker holds between tasks, and must stay short (it runs inside the pause).
using process_reader = void (*)(const promise_base* p, std::uint32_t mailbox_limit, process_facts& out) noexcept;
/// Installs the reader (idempotent; the process layer does it when its first process
/// starts). Any thread.
void set_process_reader(process_reader r) noexcept;

/// What the runtime layer's dumper reports to dump_tasks.
struct runtime_visit {
  virtual bool full() const noexcept = 0;                    ///< max_tasks reached: stop
  virtual void expect(std::size_t tasks) = 0;                ///< about this many tasks follow (before a pause)
  virtual void task(unsigned runtime, promise_base* p) = 0;  ///< a task, read while its runtime is paused
  virtual void runtime_seen(bool paused) = 0;                ///< once per runtime, after its tasks
  virtual void paused(std::uint64_t held_ns) = 0;            ///< once per pause of a runtime
 protected:
  ~runtime_visit() = default;
};
/// Lists the live single-threaded runtimes' tasks (src/task/runtime_dump.cpp).
using runtime_dumper = void (*)(const task_dump_options& opts, runtime_visit& v);
/// Installs the dumper (idempotent; every runtime's construction does it). Any thread.
void set_runtime_dumper(runtime_dumper d) noexcept;
}  // namespace detail

}  // namespace saturn
