// End to end: an in-process http::serve with /metrics on 127.0.0.1, a real Prometheus
// server (Debian's /usr/bin/prometheus, started here on 127.0.0.1 with a temporary config
// and storage, scraping every second) and its HTTP API: the requests this test made show
// up in saturn_http_requests_total. Bounded: 20 s for the first sample; Prometheus is
// stopped by its PID and its directory removed.
#include <saturn/http.hpp>
#include <saturn/sched/thread_pool.hpp>

#include <gtest/gtest.h>

#include "metrics/http_get.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

using saturn_test::http_get;

namespace {

/// A port free on 127.0.0.1 now (bound with port 0, then closed).
std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// The value of the first sample in a Prometheus /api/v1/query answer, if there is one:
/// ..."value":[1700000000.123,"42"]...
std::optional<double> first_value(const std::string& answer) {
  const std::size_t v = answer.find("\"value\":[");
  if (v == std::string::npos)
    return std::nullopt;
  const std::size_t q = answer.find('"', answer.find(',', v));
  if (q == std::string::npos)
    return std::nullopt;
  return std::strtod(answer.c_str() + q + 1, nullptr);
}

}  // namespace

TEST(MetricsPrometheus, ARealPrometheusScrapesTheRequestCounts) {
  const char* prom = "/usr/bin/prometheus";
  if (::access(prom, X_OK) != 0)
    GTEST_SKIP() << "no " << prom << " (Debian package prometheus; scripts/deps test installs it)";
  const auto started = std::chrono::steady_clock::now();

  // Files first, and removed only after the pool is gone: directory descriptors opened
  // on this thread then never reuse a socket's number that a worker closed through the
  // ring (which ThreadSanitizer cannot see, and reports as a race on the descriptor).
  const auto dir = std::filesystem::temp_directory_path() / ("saturn_prom_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "data");
  const std::uint16_t prom_port = free_port();
  std::optional<saturn::thread_pool> pool_box;
  pool_box.emplace(saturn::pool_options{.threads = 2});
  saturn::thread_pool& pool = *pool_box;
  saturn::http::router routes;
  routes.get("/hello", [](const saturn::http::request&) -> saturn::task<saturn::http::response> {
    co_return saturn::http::response::text("hello\n");
  });
  saturn::http::add_metrics_route(routes);
  std::stop_source stop;
  std::atomic<std::uint16_t> port{0};
  saturn::http::serve_options so;
  so.listeners = 1;
  so.stop_on_signals = false;
  so.stop = stop.get_token();
  so.on_listening = [&](const saturn::net::address& a) { port = a.port(); };
  std::thread server([&] {
    auto r = saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(0), so);
    EXPECT_TRUE(r) << r.err().message();
  });
  while (port.load() == 0 && std::chrono::steady_clock::now() - started < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_NE(port.load(), 0) << "the server did not start listening";

  // The route's count before (other tests in this binary may have served /hello) and the
  // requests this test makes.
  constexpr int requests = 37;
  for (int i = 0; i < requests; ++i)
    ASSERT_NE(http_get(port, "/hello").find("200 OK"), std::string::npos);

  {
    std::ofstream cfg(dir / "prom.yml");
    cfg << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           "scrape_configs:\n  - job_name: saturn\n    static_configs:\n      - targets: ['127.0.0.1:"
        << port.load() << "']\n";
  }
  const std::string cfg_arg = "--config.file=" + (dir / "prom.yml").string();
  const std::string data_arg = "--storage.tsdb.path=" + (dir / "data").string();
  const std::string listen_arg = "--web.listen-address=127.0.0.1:" + std::to_string(prom_port);
  const std::string log = (dir / "prometheus.log").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execl(prom, prom, cfg_arg.c_str(), data_arg.c_str(), listen_arg.c_str(), "--log.level=warn",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }

  // Up to 20 s for a scrape to reach the query API with the /hello count.
  const std::string query =
      "/api/v1/query?query=saturn_http_requests_total%7Broute%3D%22%2Fhello%22%2Cclass%3D%222xx%22%7D";
  std::optional<double> seen;
  std::string last;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    last = http_get(prom_port, query);
    seen = first_value(last);
    if (seen && *seen >= requests)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // The up metric says the scrape itself succeeded.
  const std::string up = http_get(prom_port, "/api/v1/query?query=up%7Bjob%3D%22saturn%22%7D");

  ::kill(pid, SIGTERM);
  int status = 0;
  bool reaped = false;
  for (int i = 0; i < 100 && !reaped; ++i) {
    reaped = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!reaped)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!reaped) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  std::string prom_log;
  {
    std::ifstream in(log);
    prom_log.assign(std::istreambuf_iterator<char>(in), {});
  }
  stop.request_stop();
  server.join();
  pool_box.reset();
  std::filesystem::remove_all(dir);

  ASSERT_TRUE(seen.has_value()) << "Prometheus returned no sample within 20 s; last answer:\n"
                                << last << "\nprometheus log:\n" << prom_log;
  // Exactly the requests made (the registry is the process's; no other test in this
  // binary serves /hello).
  EXPECT_EQ(*seen, double(requests)) << last;
  EXPECT_EQ(first_value(up).value_or(-1), 1.0) << up;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}
