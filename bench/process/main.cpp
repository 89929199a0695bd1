// saturn-bench-process: child processes, spawn-and-wait (issue #32's target: at least
// Tokio's Command rate, no zombies).
//
//   spawn_wait       N children of /bin/true (default 10,000), at most 64 in flight:
//                    64 tasks on the multi-threaded pool, each spawning one child and
//                    awaiting its exit (IORING_OP_WAITID where the kernel has it), until N
//                    have been started. ops_per_sec = N / wall; checksum = children that
//                    exited 0. After every sample: no zombie child of this process, and
//                    no child at all (waitid P_ALL says ECHILD) — else it fails.
//                    cpu_us_per_child: this process's own CPU (getrusage RUSAGE_SELF,
//                    children excluded) per child: the runtime's share, besides the
//                    kernel's fork/exec work for the child itself.
//   spawn_wait_poll  the same with the fallback wait (ring poll on the pidfd + waitid).
//   spawn_wait_posix_spawn  spawn_wait with the fallback spawn (posix_spawn + pidfd_open
//                    instead of clone3 with CLONE_VM | CLONE_VFORK | CLONE_PIDFD).
//
// The Tokio peer (bench/peers/process/tokio) does the same with
// tokio::process::Command::new("/bin/true").status().
#include <saturn/os.hpp>
#include <saturn/saturn.hpp>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

using saturn::task;
namespace os = saturn::os;

int zombie_children() {
  int n = 0;
  const int me = ::getpid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr)
    return 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line))
      continue;
    const auto paren = line.rfind(')');
    if (paren == std::string::npos)
      continue;
    std::istringstream rest(line.substr(paren + 1));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    n += state == 'Z' && ppid == me;
  }
  ::closedir(d);
  return n;
}

task<void> spawner(const std::string& program, std::atomic<int>& next, int total, std::atomic<int>& ok) {
  while (next.fetch_add(1, std::memory_order_relaxed) < total) {
    auto st = co_await os::command(program).status();
    if (st && st->success())
      ok.fetch_add(1, std::memory_order_relaxed);
  }
}

struct sample_result {
  double wall_s;
  double cpu_s;  // this process's own CPU (user + system), children excluded
  int ok;
};

double self_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

sample_result one_sample(saturn::thread_pool& pool, const std::string& program, int total, int in_flight) {
  std::atomic<int> next{0}, ok{0};
  const double c0 = self_cpu_s();
  const std::int64_t t0 = bench::now_ns();
  std::vector<saturn::join_handle<void>> hs;
  hs.reserve(static_cast<std::size_t>(in_flight));
  for (int i = 0; i < in_flight; ++i)
    hs.push_back(pool.spawn_on(static_cast<unsigned>(i) % pool.threads(), spawner(program, next, total, ok)));
  pool.block_on([](std::vector<saturn::join_handle<void>> v) -> task<void> {
    for (auto& h : v)
      co_await std::move(h);
  }(std::move(hs)));
  const double wall = static_cast<double>(bench::now_ns() - t0) / 1e9;
  return {wall, self_cpu_s() - c0, ok.load()};
}

void run(const bench::args& a, const std::string& scenario, const std::string& program, int total, int in_flight) {
  os::detail::set_child_wait_mode(scenario == "spawn_wait_poll" ? os::detail::child_wait_mode::poll
                                                                : os::detail::child_wait_mode::automatic);
  os::detail::set_spawn_mode(scenario == "spawn_wait_posix_spawn" ? os::detail::spawn_mode::posix_spawn
                                                                  : os::detail::spawn_mode::automatic);
  saturn::pool_options po;
  po.threads = static_cast<unsigned>(a.threads);
  saturn::thread_pool pool(po);
  std::vector<double> rates, cpus;
  int checksum = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    const sample_result r = one_sample(pool, program, total, in_flight);
    if (r.ok != total)
      bench::fail(scenario + ": " + std::to_string(r.ok) + " of " + std::to_string(total) + " children exited 0");
    if (const int z = zombie_children(); z != 0)
      bench::fail(scenario + ": " + std::to_string(z) + " zombie children after the sample");
    siginfo_t si{};
    if (::waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
      bench::fail(scenario + ": a child of this process is left after the sample");
    checksum = r.ok;
    if (k >= a.warmup) {
      std::fprintf(stderr, "# saturn %s sample %d: %.4f s, %.0f/s, %.1f us CPU/child\n", scenario.c_str(),
                   k - a.warmup, r.wall_s, total / r.wall_s, r.cpu_s / total * 1e6);
      rates.push_back(total / r.wall_s);
      cpus.push_back(r.cpu_s / total * 1e6);
    }
  }
  bench::record(std::string("process"), scenario, a.threads)
      .num("children", total)
      .num("in_flight", in_flight)
      .num("ops_per_sec", bench::median(rates), 4)
      .num("cpu_us_per_child", bench::median(cpus), 3)
      .num("zombies", 0)
      .num("checksum", checksum)
      .emit();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn child-process benchmarks (spawn and wait)"};
  bench::args a;
  int children = 10'000;
  int in_flight = 64;
  std::string program = "/bin/true";
  bench::add_common_flags(app, a, {"spawn_wait", "spawn_wait_poll", "spawn_wait_posix_spawn"});
  app.add_option("--children", children, "children per sample")->check(CLI::PositiveNumber);
  app.add_option("--in-flight", in_flight, "children running at once")->check(CLI::PositiveNumber);
  app.add_option("--program", program, "what each child runs (no arguments)");
  CLI11_PARSE(app, argc, argv);
  if (a.wants("spawn_wait"))
    run(a, "spawn_wait", program, children, in_flight);
  if (a.wants("spawn_wait_poll"))
    run(a, "spawn_wait_poll", program, children, in_flight);
  if (a.wants("spawn_wait_posix_spawn"))
    run(a, "spawn_wait_posix_spawn", program, children, in_flight);
  return 0;
}
