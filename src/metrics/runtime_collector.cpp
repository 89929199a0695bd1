// The runtime collector: at each render, one live_pool_stats() snapshot (the pools' lock,
// never a worker's) becomes the saturn_worker_*, saturn_ring_*, saturn_timers_* and
// saturn_pool_* families, labelled pool and worker; one live_runtime_stats() snapshot, the
// single-threaded runtimes' rings and timers (labelled runtime) and live tasks; the frame
// allocator's mapped and in-use bytes; and the process layer's (process_stats: a scan of
// the pid table). What each means: docs/observability.md.
#include <saturn/proc/proc_stats.hpp>
#include <saturn/sched/pool_stats.hpp>
#include <saturn/task/frame_allocator.hpp>
#include <saturn/task/runtime_stats.hpp>

#include <string>

#include "metrics/runtime_collector.hpp"

namespace saturn::metrics::detail {

namespace {

struct per_worker {
  const char* name;
  const char* help;
  metric_type type;
  double (*get)(const worker_stats&);
  bool needs_loop;
};

constexpr double ns = 1e-9;

const per_worker k_worker_metrics[] = {
    {"saturn_worker_tasks_run_total", "Runnables (task steps, posted callables) the worker ran.", metric_type::counter,
     [](const worker_stats& w) { return double(w.tasks_run); }, false},
    {"saturn_worker_steal_attempts_total", "Rounds over other workers' and submitters' queues looking for work.",
     metric_type::counter, [](const worker_stats& w) { return double(w.steal_attempts); }, false},
    {"saturn_worker_steals_total", "Steal rounds that took work.", metric_type::counter,
     [](const worker_stats& w) { return double(w.steals); }, false},
    {"saturn_worker_parks_total", "Times the worker went to sleep.", metric_type::counter,
     [](const worker_stats& w) { return double(w.parks); }, false},
    {"saturn_worker_wakeups_total", "Times another thread woke the worker from a park.", metric_type::counter,
     [](const worker_stats& w) { return double(w.wakeups); }, false},
    {"saturn_worker_stalls_total", "Runs longer than a stall detector's threshold (reported once each).",
     metric_type::counter, [](const worker_stats& w) { return double(w.stalls); }, false},
    {"saturn_worker_parked_seconds_total", "Time the worker spent parked.", metric_type::counter,
     [](const worker_stats& w) { return double(w.parked_ns) * ns; }, false},
    {"saturn_worker_busy_seconds_total", "Time the worker was not parked (running tasks, polling, searching).",
     metric_type::counter,
     [](const worker_stats& w) { return w.uptime_ns > w.parked_ns ? double(w.uptime_ns - w.parked_ns) * ns : 0.0; },
     false},
    {"saturn_worker_local_queue_depth", "Tasks in the worker's deque and LIFO slot now.", metric_type::gauge,
     [](const worker_stats& w) { return double(w.local_depth); }, false},
    {"saturn_ring_enters_total", "io_uring_enter calls of the worker's event loop.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.enters); }, true},
    {"saturn_ring_sqes_submitted_total", "SQEs the kernel accepted from the worker's ring.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.sqes_submitted); }, true},
    {"saturn_ring_sq_full_total", "Submissions that found the SQ full and flushed it first.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.sq_full); }, true},
    {"saturn_ring_cqes_total", "CQEs dispatched to operations.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.completions); }, true},
    {"saturn_ring_cq_overflows_total", "Reaps that found completions the kernel kept aside (CQ overflow).",
     metric_type::counter, [](const worker_stats& w) { return double(w.loop.cq_overflows); }, true},
    {"saturn_ring_remote_wakes_total", "Wake-ups of the worker's loop sent by other threads.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.remote_wakes); }, true},
    {"saturn_timers_armed_total", "Loop timers armed (sleeps, deadlines, timeouts).", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.timers_armed); }, true},
    {"saturn_timers_fired_total", "Loop timers that expired and fired.", metric_type::counter,
     [](const worker_stats& w) { return double(w.loop.timers_fired); }, true},
};

}  // namespace

collector runtime_collector() {
  return [](sample_sink& sink) {
    const std::vector<pool_stats> pools = live_pool_stats();
    const std::vector<runtime_stats> runtimes = live_runtime_stats();
    for (const per_worker& m : k_worker_metrics) {
      sink.family(m.name, m.help, m.type);
      for (const pool_stats& p : pools) {
        const std::string pool = std::to_string(p.id);
        for (const worker_stats& w : p.workers) {
          if (m.needs_loop && !w.has_loop)
            continue;
          sink.sample(m.name, {{"pool", pool}, {"worker", std::to_string(w.index)}}, m.get(w));
        }
      }
      if (!m.needs_loop)
        continue;
      // A runtime's loop is read through the same getters, as a worker with only a loop.
      for (const runtime_stats& r : runtimes) {
        worker_stats as_worker;
        as_worker.has_loop = true;
        as_worker.loop = r.loop;
        sink.sample(m.name, {{"runtime", std::to_string(r.id)}}, m.get(as_worker));
      }
    }
    sink.family("saturn_runtime_live_tasks", "Spawned tasks alive on each single-threaded runtime.",
                metric_type::gauge);
    for (const runtime_stats& r : runtimes)
      sink.sample("saturn_runtime_live_tasks", {{"runtime", std::to_string(r.id)}}, std::uint64_t(r.live_tasks));
    sink.family("saturn_pool_workers", "Worker threads of each live thread_pool.", metric_type::gauge);
    for (const pool_stats& p : pools)
      sink.sample("saturn_pool_workers", {{"pool", std::to_string(p.id)}}, std::uint64_t(p.workers.size()));
    sink.family("saturn_pool_injection_queue_depth", "Tasks in the pool's global injection queue now.",
                metric_type::gauge);
    for (const pool_stats& p : pools)
      sink.sample("saturn_pool_injection_queue_depth", {{"pool", std::to_string(p.id)}},
                  std::uint64_t(p.injection_depth));
    sink.family("saturn_pool_submitter_queue_depth", "Tasks in the pool's registered submitters' queues now.",
                metric_type::gauge);
    for (const pool_stats& p : pools)
      sink.sample("saturn_pool_submitter_queue_depth", {{"pool", std::to_string(p.id)}},
                  std::uint64_t(p.submitter_depth));
    sink.family("saturn_task_frame_mapped_bytes",
                "Bytes the coroutine-frame allocator has mapped (frames in use and cached free).", metric_type::gauge);
    sink.sample("saturn_task_frame_mapped_bytes", {}, std::uint64_t(task_memory_mapped()));
    const saturn::detail::frame_usage_bytes fu = saturn::detail::frame_usage();
    sink.family("saturn_task_frame_in_use_bytes",
                "Bytes of coroutine frames alive, carved from the mapped chunks (at their size class).",
                metric_type::gauge);
    sink.sample("saturn_task_frame_in_use_bytes", {}, std::uint64_t(fu.small));
    sink.family("saturn_task_frame_large_bytes",
                "Bytes of coroutine frames alive that are too large for the chunks (operator new).",
                metric_type::gauge);
    sink.sample("saturn_task_frame_large_bytes", {}, std::uint64_t(fu.large));
    const proc_stats ps = process_stats();
    sink.family("saturn_processes_alive", "Processes (saturn::process) started and not yet ended.", metric_type::gauge);
    sink.sample("saturn_processes_alive", {}, ps.alive);
    sink.family("saturn_process_slots", "Pid-table slots ever handed out (high-water mark of processes at once).",
                metric_type::gauge);
    sink.sample("saturn_process_slots", {}, ps.slots);
    sink.family("saturn_supervisor_restarts_total", "Children restarted by supervisors.", metric_type::counter);
    sink.sample("saturn_supervisor_restarts_total", {}, ps.supervisor_restarts);
    sink.family("saturn_supervisor_give_ups_total", "Supervisors that gave up past their restart intensity.",
                metric_type::counter);
    sink.sample("saturn_supervisor_give_ups_total", {}, ps.supervisor_give_ups);
    sink.family("saturn_process_mailbox_depth_max",
                "Most messages any process found waiting in its inbox when it took it, since start.",
                metric_type::gauge);
    sink.sample("saturn_process_mailbox_depth_max", {}, ps.mailbox_depth_max);
  };
}

}  // namespace saturn::metrics::detail
