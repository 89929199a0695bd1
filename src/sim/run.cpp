// sim::run and sim::explore (include/saturn/sim/run.hpp).
#include <saturn/sim/run.hpp>

#include <exception>
#include <string>
#include <optional>
#include <utility>

#include "sched/sim_pool.hpp"

namespace saturn::sim {

runtime_options default_runtime_options() {
  runtime_options o;
  o.loop.recv_buffer_count = 64;
  o.loop.recv_buffer_max = 1024;
  o.loop.recv_buffer_size = 4096;
  return o;
}

namespace {

/// The program as a spawned task that records how it ended (a free function, not a
/// capturing lambda: the coroutine must not outlive what it captures).
task<void> run_program(const program& prog, world& w, bool& finished, std::string& failure) {
  try {
    co_await prog(w);
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "the program threw something that is not a std::exception";
  }
  finished = true;
  // This turn of the loop must not go to sleep: run() below checks `finished` after it.
  if (event_loop* l = event_loop::current())
    l->stay_awake();
}

/// A run's frame: the world and the fault scope around `body`, which runs the program and
/// returns once it finished or the world failed; the outcome filled from what it left.
template <class Body>
outcome run_in_world(std::uint64_t seed, const options& opts, Body body) {
  outcome out;
  out.seed = seed;
  std::optional<testing::fault_scope> faults;
  if (!opts.faults.empty()) {
    testing::fault_plan plan;
    plan.seed = seed * 0x9e3779b97f4a7c15ull + 1;
    plan.rules = opts.faults;
    faults.emplace(std::move(plan));
  }
  world w(seed, opts);
  bool finished = false;
  try {
    body(w, finished, out.failure);
  } catch (const std::exception& e) {
    // The runtime could not be set up or torn down under the simulation.
    if (out.failure.empty())
      out.failure = e.what();
  }
  out.ok = finished && out.failure.empty();
  if (!finished && out.failure.empty())
    out.failure = "saturn::sim: the program did not finish";
  out.trace_hash = w.trace_hash();
  out.completions = w.completions();
  out.virtual_time = w.elapsed();
  if (faults)
    out.faults_injected = faults->stats().total_errors() + faults->stats().total_shorts();
  return out;
}

}  // namespace

outcome run(std::uint64_t seed, const options& opts, const program& prog, const runtime_options& ropts) {
  return run_in_world(seed, opts, [&](world& w, bool& finished, std::string& failure) {
    runtime rt(ropts);
    // The loop is driven here rather than through block_on: a deadlock or the time limit
    // is thrown out of the loop's wait, and block_on would then destroy the program's
    // frames while their operations are still in the (simulated) kernel. Here the frames
    // stay alive until the runtime's destructor has cancelled and reaped every operation.
    event_loop& loop = rt.loop();
    loop.add_keep_alive();
    {
      join_handle<void> h = rt.spawn(run_program(prog, w, finished, failure));
      try {
        while (!finished)
          loop.run_once(true);
      } catch (const std::exception& e) {
        if (failure.empty())
          failure = e.what();
      }
    }
    loop.release_keep_alive();
  });
}

pool_options default_pool_options(unsigned workers) {
  pool_options o;
  o.threads = workers;
  o.loop = default_runtime_options().loop;
  return o;
}

outcome run(std::uint64_t seed, const options& opts, const program& prog, const pool_options& popts) {
  return run_in_world(seed, opts, [&](world& w, bool& finished, std::string& failure) {
    pool_options po = popts;
    if (po.threads == 0)
      po.threads = 2;  // not the machine's CPU count: a run must not depend on where it runs
    thread_pool pool(po);
    // As above, the pool is driven here (not through block_on, which cannot report a
    // deadlock): its destructor cancels and reaps every operation before any frame goes.
    join_handle<void> h = pool.spawn(run_program(prog, w, finished, failure));
    try {
      detail::sim_drive_until([](void* f) { return *static_cast<bool*>(f); }, &finished);
    } catch (const std::exception& e) {
      if (failure.empty())
        failure = e.what();
    }
  });
}

options minimize_faults(std::uint64_t seed, const options& opts, const program& prog, int budget,
                        const runtime_options& ropts) {
  options best = opts;
  auto still_fails = [&](const options& o) { return --budget >= 0 && !run(seed, o, prog, ropts).ok; };
  for (std::size_t i = 0; i < best.faults.size() && budget > 0;) {
    options fewer = best;
    fewer.faults.erase(fewer.faults.begin() + static_cast<std::ptrdiff_t>(i));
    if (still_fails(fewer))
      best = std::move(fewer);
    else
      ++i;
  }
  for (std::size_t i = 0; i < best.faults.size() && budget > 0; ++i) {
    for (int halvings = 0; halvings < 8 && budget > 0; ++halvings) {
      options rarer = best;
      rarer.faults[i].probability /= 2;
      if (!still_fails(rarer))
        break;
      best = std::move(rarer);
    }
  }
  return best;
}

namespace {
/// Seeds first_seed.. in turn on the runtime or pool `how` names; the first failure.
template <class How>
std::optional<outcome> explore_on(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                                  const program& prog, const How& how) {
  for (std::uint64_t i = 0; i < count; ++i) {
    outcome o = run(first_seed + i, opts, prog, how);
    if (!o.ok)
      return o;
  }
  return std::nullopt;
}
}  // namespace

std::optional<outcome> explore(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                               const program& prog, const pool_options& popts) {
  return explore_on(first_seed, count, opts, prog, popts);
}

std::optional<outcome> explore(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                               const program& prog, const runtime_options& ropts) {
  return explore_on(first_seed, count, opts, prog, ropts);
}

}  // namespace saturn::sim
