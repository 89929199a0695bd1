// suspended_100k: 100,000 tasks each wait on one shared saturn::event; once all are
// suspended, bytes_per_task = (RSS now - RSS before) / tasks from /proc/self/statm; then
// the event is set and all are joined. Every sample runs in a fresh child process (this
// binary re-executed with --child), as the peers do, so no sample reuses the memory an
// earlier one freed.
#include <saturn/sync/event.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <string>

#include "scenarios.hpp"

namespace spawn_bench {
namespace {
constexpr std::uint64_t k_tasks = 100'000;

saturn::task<std::uint64_t> waiter(saturn::event& ev, std::atomic<std::uint64_t>& ready) {
  ready.fetch_add(1, std::memory_order_release);
  auto r = co_await ev.wait();
  co_return r ? 1 : 0;
}

struct sample {
  double bytes_per_task;
  double wall_s;
  std::uint64_t completed;
};

saturn::task<sample> driver() {
  saturn::task_context& ctx = co_await saturn::this_task::context();
  saturn::event ev;
  std::atomic<std::uint64_t> ready{0};
  const long before = bench::current_rss_bytes();
  const std::int64_t t0 = bench::now_ns();
  std::vector<saturn::join_handle<std::uint64_t>> handles;
  handles.reserve(k_tasks);
  for (std::uint64_t i = 0; i < k_tasks; ++i)
    handles.push_back(saturn::spawn_in(ctx.sched->root_context(), waiter(ev, ready)));
  while (ready.load(std::memory_order_acquire) < k_tasks)
    co_await saturn::yield();
  const long after = bench::current_rss_bytes();
  ev.set();
  std::uint64_t completed = 0;
  for (auto& h : handles)
    completed += co_await std::move(h);
  const std::int64_t t1 = bench::now_ns();
  co_return sample{double(after - before) / double(k_tasks), double(t1 - t0) / 1e9, completed};
}
}  // namespace

int suspended_child(const bench::args& a) {
  saturn::thread_pool pool(saturn::pool_options{.threads = static_cast<unsigned>(a.threads)});
  sample s = pool.block_on(driver());
  std::printf("%.3f %.9f %llu\n", s.bytes_per_task, s.wall_s, static_cast<unsigned long long>(s.completed));
  return 0;
}

void suspended_100k(const bench::args& a, const char* self) {
  std::vector<double> bpt, walls;
  std::uint64_t completed = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    const std::string cmd = std::string(self) + " --threads " + std::to_string(a.threads) + " --child suspended_100k";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr)
      bench::fail("popen " + cmd);
    double b = 0, w = 0;
    unsigned long long c = 0;
    const int got = std::fscanf(p, "%lf %lf %llu", &b, &w, &c);
    const int status = ::pclose(p);
    if (got != 3 || status != 0)
      bench::fail("suspended_100k child failed (status " + std::to_string(status) + ")");
    if (c != k_tasks)
      bench::fail("suspended_100k: " + std::to_string(c) + " of " + std::to_string(k_tasks) + " tasks completed");
    completed = c;
    if (k >= a.warmup) {
      std::fprintf(stderr, "# saturn suspended_100k sample %d: %.1f B/task\n", k - a.warmup, b);
      bpt.push_back(b);
      walls.push_back(w);
    }
  }
  bench::record("spawn", "suspended_100k", a.threads)
      .num("tasks", k_tasks)
      .num("wall_s", bench::median(walls))
      .num("bytes_per_task", bench::median(bpt))
      .num("checksum", completed)
      .emit();
}

}  // namespace spawn_bench
