// saturn-bench-ring: the `ring` suite of docs/workloads.md.
//
//   saturn-bench-ring N LAPS [--threads T --samples S --warmup W]
//
// N processes in a ring on a thread_pool, each with its own mailbox: process i receives
// token v and sends v-1 to process (i+1) mod N. Like the Erlang peer: process 0 is spawned
// first and learns its successor by a message; processes N-1..1 are spawned knowing theirs
// (spawn_ns_per_proc covers spawning all N and that message). The driver sends N*LAPS to
// process 0; the process that receives 0 (process 0, after LAPS laps) tells the driver
// (hops_per_sec = N*LAPS / that time). Every process counts the tokens it forwarded; a stop
// wave around the ring sums the counts (the checksum, which must be N*LAPS) and ends the
// processes, outside the timed region.
#include "harness.hpp"

#include <saturn/proc.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync/event.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <variant>

namespace {

struct ring_stop {
  std::int64_t k;
  std::int64_t acc;
};
using ring_msg = std::variant<std::int64_t, ring_stop, saturn::pid>;
using ring_pid = saturn::pid_of<ring_msg>;

struct ring_shared {
  saturn::event done;
  saturn::event stopped;
  std::int64_t sum = 0;
  std::int64_t t_done = 0;
};

/// One message for one process; returns true when the process should end. A plain
/// function, so the message is not kept in the coroutine frame (a smaller frame).
bool handle(ring_msg&& m, ring_pid& next, std::int64_t& count, ring_shared* sh) {
  if (const auto* v = std::get_if<std::int64_t>(&m)) {
    if (*v == 0) {
      sh->t_done = bench::now_ns();
      sh->done.set();
      return false;
    }
    saturn::send(next, *v - 1);
    ++count;
    return false;
  }
  if (const auto* s = std::get_if<ring_stop>(&m)) {
    if (s->k == 1) {
      sh->sum = s->acc + count;
      sh->stopped.set();
    } else {
      saturn::send(next, ring_stop{s->k - 1, s->acc + count});
    }
    return true;
  }
  next = ring_pid::unchecked(std::get<saturn::pid>(m));  // process 0 learns its successor
  return false;
}

saturn::process<ring_msg> node(ring_pid next, ring_shared* sh) {
  std::int64_t count = 0;
  while (!handle(co_await saturn::receive(), next, count, sh)) {
  }
}

struct sample {
  std::int64_t spawn_ns;
  std::int64_t hop_ns;
  std::int64_t sum;
};

saturn::task<sample> run_sample(std::int64_t n, std::int64_t laps) {
  ring_shared sh;
  const std::int64_t t0 = bench::now_ns();
  const ring_pid p0 = saturn::spawn_process(node, ring_pid{}, &sh);
  ring_pid next = p0;
  for (std::int64_t i = n - 1; i >= 1; --i)
    next = saturn::spawn_process(node, next, &sh);
  saturn::send(p0, saturn::pid(next));
  const std::int64_t t1 = bench::now_ns();
  saturn::send(p0, n * laps);
  (void)co_await sh.done.wait();
  const std::int64_t t2 = sh.t_done;
  saturn::send(p0, ring_stop{n, 0});
  (void)co_await sh.stopped.wait();
  bench::do_not_optimize(sh.sum);
  co_return sample{t1 - t0, t2 - t1, sh.sum};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn process ring (docs/workloads.md, suite ring)"};
  bench::args a;
  std::int64_t n = 0, laps = 0;
  app.add_option("N", n, "processes in the ring")->required()->check(CLI::PositiveNumber);
  app.add_option("LAPS", laps, "laps of the token")->required()->check(CLI::PositiveNumber);
  bench::add_common_flags(app, a, {});
  CLI11_PARSE(app, argc, argv);

  saturn::thread_pool pool({.threads = static_cast<unsigned>(a.threads)});
  std::vector<double> spawn_per, hops_per_sec, walls;
  std::int64_t checksum = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    const sample s = pool.block_on(run_sample(n, laps));
    if (s.sum != n * laps)
      bench::fail("ring checksum " + std::to_string(s.sum) + " != " + std::to_string(n * laps));
    checksum = s.sum;
    if (k < a.warmup)
      continue;
    std::fprintf(stderr, "# saturn ring %lld x %lld sample %d: spawn %.3f ms, hops %.3f ms\n",
                 static_cast<long long>(n), static_cast<long long>(laps), k - a.warmup,
                 static_cast<double>(s.spawn_ns) / 1e6, static_cast<double>(s.hop_ns) / 1e6);
    spawn_per.push_back(static_cast<double>(s.spawn_ns) / static_cast<double>(n));
    hops_per_sec.push_back(static_cast<double>(n * laps) / (static_cast<double>(s.hop_ns) / 1e9));
    walls.push_back(static_cast<double>(s.hop_ns) / 1e9);
  }
  bench::record r("ring", "ring_" + std::to_string(n) + "_" + std::to_string(laps), a.threads);
  r.num("procs", static_cast<long long>(n))
      .num("laps", static_cast<long long>(laps))
      .num("hops", static_cast<long long>(n * laps))
      .num("wall_s", bench::median(walls))
      .num("spawn_ns_per_proc", bench::median(spawn_per), 1)
      .num("hops_per_sec", std::round(bench::median(hops_per_sec)))
      .num("peak_rss_kib", bench::peak_rss_kib())
      .num("checksum", static_cast<long long>(checksum));
  r.emit();
  return 0;
}
