// saturn-bench-http_client: the `http-client` suite's saturn side (bench/peers/http_client/
// README.md). C concurrent tasks on a thread_pool in io mode, each looping
// `co_await client.get(url)` on one shared http::client (max_connections_per_host = C,
// so every task keeps its own keep-alive connection), for D seconds. Every answer is
// checked: status 200 and the exact body (--body, default "Hello, World!"); anything else
// counts as an error. Prints one JSON line (the conventions of docs/workloads.md) with the
// requests done, the errors, the wall time and the process's own user+sys CPU over the
// measured window (getrusage RUSAGE_SELF), so CPU per request = (user+sys)/requests.
//
//   saturn-bench-http_client --url U [--concurrency 64] [--duration-s 5] [--threads 2]
//                            [--body TEXT]
#include <saturn/http/client.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/task_group.hpp>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace http = saturn::http;
using saturn::task;
using clk = std::chrono::steady_clock;

namespace {

struct counters {
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> errors{0};
};

task<void> worker(http::client& c, const std::string& url, const std::string& want, clk::time_point end, counters& n) {
  std::uint64_t ok = 0, bad = 0;
  while (clk::now() < end) {
    auto r = co_await c.get(url);
    const bool good = r && r->status == 200 && r->body == want;
    if (good) {
      ++ok;
    } else {
      ++bad;
      if (bad <= 3)
        std::fprintf(
            stderr, "saturn-bench-http_client: bad answer: %s\n",
            r ? ("status " + std::to_string(r->status) + " body " + r->body).c_str() : r.err().message().c_str());
    }
  }
  n.ok.fetch_add(ok);
  n.errors.fetch_add(bad);
}

task<void> run_all(http::client& c, const std::string& url, const std::string& want, int conc, clk::time_point end,
                   counters& n) {
  co_await saturn::task_group::run([&](saturn::task_group& g) -> task<> {
    for (int i = 0; i < conc; ++i)
      g.spawn(worker(c, url, want, end, n));
    co_return;
  });
}

double user_s(const rusage& u) { return static_cast<double>(u.ru_utime.tv_sec) + u.ru_utime.tv_usec / 1e6; }
double sys_s(const rusage& u) { return static_cast<double>(u.ru_stime.tv_sec) + u.ru_stime.tv_usec / 1e6; }

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "usage: saturn-bench-http_client --url U [--concurrency C] [--duration-s D] [--threads T] "
               "[--body TEXT] (%s)\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  std::string want = "Hello, World!";
  int conc = 64;
  double duration = 5;
  unsigned threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      usage("a flag needs a value");
    const char* v = argv[++i];
    if (a == "--url")
      url = v;
    else if (a == "--concurrency")
      conc = std::atoi(v);
    else if (a == "--duration-s")
      duration = std::atof(v);
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::atoi(v));
    else if (a == "--body")
      want = v;
    else
      usage("unknown flag");
  }
  if (url.empty() || conc < 1 || duration <= 0 || threads < 1)
    usage("--url is required; counts must be positive");

  http::client_options o;
  o.max_connections_per_host = static_cast<std::size_t>(conc);
  o.decompress = false;  // nginx sends identity; no Accept-Encoding, like the peers
  http::client c(o);
  saturn::thread_pool pool({.threads = threads, .mode = saturn::pool_mode::io});
  counters n;

  rusage u0{}, u1{};
  getrusage(RUSAGE_SELF, &u0);
  const auto t0 = clk::now();
  const auto end = t0 + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(duration));
  pool.block_on(run_all(c, url, want, conc, end, n));
  const double wall = std::chrono::duration<double>(clk::now() - t0).count();
  getrusage(RUSAGE_SELF, &u1);

  const auto ok = n.ok.load();
  const auto errors = n.errors.load();
  const double user = user_s(u1) - user_s(u0), sys = sys_s(u1) - sys_s(u0);
  std::printf(
      "{\"suite\":\"http-client\",\"scenario\":\"get_keepalive_%d\",\"runtime\":\"saturn\",\"threads\":%u,"
      "\"concurrency\":%d,\"requests\":%llu,\"errors\":%llu,\"wall_s\":%.3f,\"ops_per_sec\":%.0f,"
      "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_us_per_req\":%.3f,\"connections\":%zu}\n",
      conc, threads, conc, static_cast<unsigned long long>(ok), static_cast<unsigned long long>(errors), wall,
      ok / wall, user, sys, ok ? (user + sys) * 1e6 / static_cast<double>(ok) : 0.0, c.connections_opened());
  return errors == 0 && ok > 0 ? 0 : 1;
}
