// The command lines of saturn-echo and saturn-http. A bad argument is refused with a
// message naming the option and exit status 2, never wrapped or deferred (saturn-echo:
// --port 70000 used to bind port 4464, --buffers 3 started a server that reset every
// connection; saturn-http: --port 0 bound a port nobody learnt, --threads 300 died in
// std::terminate, --max-body -5 started a server). A port in use exits 1 naming
// 127.0.0.1:PORT, also when other SO_REUSEPORT listeners hold it; SIGINT and SIGTERM stop
// a serving process with status 0.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/run_program.hpp"

namespace {

namespace net = saturn::net;

class server_cli : public ::testing::TestWithParam<const char*> {
 protected:
  saturn_test::program_outcome run(std::vector<std::string> args, int sig = 0) const {
    return saturn_test::run_program(std::string(SATURN_BIN_DIR) + "/" + GetParam(), std::move(args), sig);
  }
};

/// Arguments a program must refuse, and the option its message must name.
struct usage_case {
  std::vector<std::string> args;
  const char* names;
};

/// Each case exits 2 with a message naming the option; --help exits 0.
void expect_usage_errors(const std::string& program, const std::vector<usage_case>& cases) {
  const std::string bin = std::string(SATURN_BIN_DIR) + "/" + program;
  ASSERT_EQ(::access(bin.c_str(), X_OK), 0) << bin << " is not built";
  for (const auto& c : cases) {
    const auto o = saturn_test::run_program(bin, c.args);
    std::string line;
    for (const auto& a : c.args)
      line += a + " ";
    EXPECT_EQ(o.status, 2) << program << " " << line << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << o.err;
  }
  EXPECT_EQ(saturn_test::run_program(bin, {"--help"}).status, 0);
}

TEST(server_cli_usage, saturn_echo_refuses_bad_arguments_with_exit_2) {
  expect_usage_errors("saturn-echo", {
                                         {{"--port", "70000", "--threads", "1"}, "--port"},
                                         {{"--port", "0", "--threads", "1"}, "--port"},
                                         {{"--port", "-1"}, "--port"},
                                         {{"--threads", "1"}, "--port"},
                                         {{"--port", "5000", "--threads", "0"}, "--threads"},
                                         {{"--port", "5000", "--threads", "100000"}, "--threads"},
                                         {{"--port", "5000", "--buffers", "3"}, "--buffers"},
                                         {{"--port", "5000", "--buffers", "65536"}, "--buffers"},
                                         {{"--port", "5000", "--buffer-size", "0"}, "--buffer-size"},
                                         // The ring starts at --buffers and only grows to --max-buffers.
                                         {{"--port", "5000", "--buffers", "8192"}, "--max-buffers"},
                                         {{"--port", "5000", "--buffers", "64", "--max-buffers", "32"}, "--max-buffers"},
                                         {{"--port", "5000", "--bogus"}, "--bogus"},
                                         {{"--port", "5000", "--accept", "sideways"}, "--accept"},
                                         // Decimal only: CLI11 alone reads 0x94A9 as hex and 0112201 as octal 38017.
                                         {{"--port", "0x94A9"}, "--port"},
                                         {{"--port", "0112201"}, "--port"},
                                         {{"--port", "5000", "--threads", "0x2"}, "--threads"},
                                         // TLS needs both files.
                                         {{"--port", "5000", "--tls"}, "--tls"},
                                         {{"--port", "5000", "--tls", "--tls-cert", "c.pem"}, "--tls"},
                                     });
}

// A certificate that cannot be loaded ends the program with status 1 and a message naming
// the file: saturn-echo --tls, and saturn-arena when --tls-cert is given.
TEST(server_cli_usage, tls_certificate_errors_name_the_file) {
  const std::string dir = SATURN_BIN_DIR;
  auto echo = saturn_test::run_program(dir + "/saturn-echo", {"--port", "5000", "--threads", "1", "--tls", "--tls-cert",
                                                               "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"});
  EXPECT_EQ(echo.status, 1) << echo.err;
  EXPECT_NE(echo.err.find("/nonexistent/cert.pem"), std::string::npos) << echo.err;
  const std::string arena = dir + "/saturn-arena";
  if (::access(arena.c_str(), X_OK) != 0)
    GTEST_SKIP() << arena << " is not built";
  auto a = saturn_test::run_program(arena, {"--port", "5002", "--tls-port", "5001", "--tls-cert", "/nonexistent/a.crt",
                                            "--tls-key", "/nonexistent/a.key", "--threads", "1"});
  EXPECT_EQ(a.status, 1) << a.err;
  EXPECT_NE(a.err.find("/nonexistent/a.crt"), std::string::npos) << a.err;
}

// --help shows every tunable's default, so a user can see what a run without it used.
TEST(server_cli_usage, saturn_echo_help_shows_the_defaults) {
  const std::string cmd = std::string(SATURN_BIN_DIR) + "/saturn-echo --help";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0);
  for (const char* d : {"512", "4096", "16384", "50"})
    EXPECT_NE(out.find(d), std::string::npos) << "default " << d << " missing from:\n" << out;
}

TEST(server_cli_usage, saturn_http_refuses_bad_arguments_with_exit_2) {
  expect_usage_errors("saturn-http", {
                                         {{"--port", "70000", "--threads", "1"}, "--port"},
                                         {{"--port", "0", "--threads", "1"}, "--port"},
                                         {{"--port", "-1"}, "--port"},
                                         {{"--port", "5000", "--threads", "0"}, "--threads"},
                                         {{"--port", "5000", "--threads", "300"}, "--threads"},
                                         {{"--port", "5000", "--max-connections", "0"}, "--max-connections"},
                                         {{"--port", "5000", "--header-timeout-ms", "-5"}, "--header-timeout-ms"},
                                         {{"--port", "5000", "--idle-timeout-ms", "0"}, "--idle-timeout-ms"},
                                         {{"--port", "5000", "--send-timeout-ms", "0"}, "--send-timeout-ms"},
                                         {{"--port", "0x94A9"}, "--port"},
                                         {{"--port", "0112201"}, "--port"},
                                         {{"--port", "5000", "--max-body", "-5"}, "--max-body"},
                                         {{"--port", "5000", "--spin-us", "x"}, "--spin-us"},
                                         {{"--port", "5000", "--bogus"}, "--bogus"},
                                     });
}

TEST_P(server_cli, port_in_use_exits_1_naming_the_port) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), {.reuse_addr = false});
  ASSERT_TRUE(l.has_value());
  const std::string port = std::to_string(l->local_address()->port());
  const auto o = run({"--port", port, "--threads", "1"});
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("127.0.0.1:" + port), std::string::npos) << o.err;
}

// One SO_REUSEPORT listener per worker must not join a port that another process's
// SO_REUSEPORT listeners hold (the kernel would split the connections between them).
TEST_P(server_cli, port_held_by_a_reuseport_group_exits_1) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), {.reuse_port = true});
  ASSERT_TRUE(l.has_value());
  const std::string port = std::to_string(l->local_address()->port());
  const auto o = run({"--port", port, "--threads", "2", "--accept", "reuseport"}, SIGTERM);
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("127.0.0.1:" + port), std::string::npos) << o.err;
}

TEST_P(server_cli, sigint_and_sigterm_exit_0) {
  for (int sig : {SIGINT, SIGTERM}) {
    auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
    ASSERT_TRUE(l.has_value());
    const std::string port = std::to_string(l->local_address()->port());
    l->close();
    const auto o = run({"--port", port, "--threads", "2"}, sig);
    EXPECT_EQ(o.status, 0) << "signal " << sig << ": " << o.err;
  }
}

/// A blocking client socket connected to 127.0.0.1:port, retried while the server starts.
int connect_retrying(std::uint16_t port) {
  for (int i = 0; i < 300; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0)
      return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// saturn-echo's stop is os::graceful_stop: at SIGTERM an open connection keeps working
// for --stop-grace-ms, then is closed, and the server exits 0 — not at once, not never.
TEST(server_cli_echo, sigterm_gives_open_connections_the_grace_then_closes_them) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  ASSERT_TRUE(l.has_value());
  const std::uint16_t port = l->local_address()->port();
  l->close();
  const std::string bin = std::string(SATURN_BIN_DIR) + "/saturn-echo";
  const std::string port_s = std::to_string(port);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(bin.c_str(), bin.c_str(), "--port", port_s.c_str(), "--threads", "2", "--stop-grace-ms", "400", nullptr);
    ::_exit(127);
  }
  const int fd = connect_retrying(port);
  ASSERT_GE(fd, 0) << "saturn-echo did not start";
  char buf[8] = {};
  ASSERT_EQ(::write(fd, "hi", 2), 2);
  ASSERT_EQ(::read(fd, buf, sizeof buf), 2);
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Within the grace the connection still echoes.
  ASSERT_EQ(::write(fd, "yo", 2), 2);
  ASSERT_EQ(::read(fd, buf, sizeof buf), 2);
  EXPECT_EQ(std::string(buf, 2), "yo");
  // Then it is closed (EOF), and the process exits 0.
  EXPECT_EQ(::read(fd, buf, sizeof buf), 0);
  const auto closed_after = std::chrono::steady_clock::now() - t0;
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "saturn-echo did not exit after SIGTERM";
  }
  ::close(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_GE(closed_after, std::chrono::milliseconds(350));
  EXPECT_LT(closed_after, std::chrono::seconds(3));
}

/// Starts SATURN_BIN_DIR/`program` with `args` on a free port of 127.0.0.1: its pid and port.
std::pair<pid_t, std::uint16_t> start_server(const std::string& program, std::vector<std::string> args) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!l)
    return {-1, 0};
  const std::uint16_t port = l->local_address()->port();
  l->close();
  const std::string bin = std::string(SATURN_BIN_DIR) + "/" + program;
  args.insert(args.begin(), {bin, "--port", std::to_string(port)});
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  return {pid, port};
}

/// True when a connect to 127.0.0.1:port is refused.
bool connect_refused(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int e = errno;
  ::close(fd);
  return rc == -1 && e == ECONNREFUSED;
}

/// The wait status of `pid` once it exits, within 5 s; else it is killed and -1 returned.
int exit_status_within_5s(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 500; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

/// Reads from `fd` until `want` bytes came or the peer closed (2 s per read at most).
std::string read_some(int fd, std::size_t want) {
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[4096];
  while (got.size() < want) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0)
      break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

// saturn-http's stop is os::graceful_stop too: at SIGTERM new connections are refused and
// an idle keep-alive connection is closed at once, while a request in flight (here a
// /delay/700 sent before the signal) still finishes and is answered 200 within
// --stop-grace-ms; then the process exits 0.
TEST(server_cli_http, sigterm_lets_requests_in_flight_finish_and_refuses_new_connections) {
  const auto [pid, port] = start_server("saturn-http", {"--threads", "2", "--stop-grace-ms", "3000"});
  ASSERT_GT(pid, 0);
  const int idle = connect_retrying(port);
  ASSERT_GE(idle, 0) << "saturn-http did not start";
  const std::string plain = "GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(::write(idle, plain.data(), plain.size()), static_cast<ssize_t>(plain.size()));
  const std::string first = read_some(idle, 1);
  EXPECT_NE(first.find("Hello, World!"), std::string::npos) << first;
  const int busy = connect_retrying(port);
  ASSERT_GE(busy, 0);
  const std::string slow = "GET /delay/700 HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(::write(busy, slow.data(), slow.size()), static_cast<ssize_t>(slow.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the handler is sleeping now
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_TRUE(connect_refused(port)) << "a connection was accepted after SIGTERM";
  // The idle keep-alive connection was closed (EOF, no answer).
  EXPECT_EQ(read_some(idle, 1), "");
  // The request in flight finishes: 200 and its body, after its 700 ms.
  const std::string answer = read_some(busy, 1 << 16);
  const auto answered_after = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_EQ(answer.substr(answer.size() >= 3 ? answer.size() - 3 : 0), "700") << answer;
  EXPECT_GE(answered_after, std::chrono::milliseconds(450));
  EXPECT_LT(answered_after, std::chrono::milliseconds(2500)) << "answered only when the grace was over";
  const int status = exit_status_within_5s(pid);
  ::close(idle);
  ::close(busy);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500))
      << "the server waited for the grace although nothing was in flight any more";
}

// saturn-arena the same way (http::serve's graceful mode, the same server::drain as
// saturn-http above): at SIGTERM new connections are refused, a kept-alive idle one and one
// whose request is still arriving (an upload half sent: "reading", not yet in a handler)
// are closed at once, and the process exits 0 without waiting out --stop-grace-ms.
TEST(server_cli_arena, sigterm_refuses_new_connections_and_closes_idle_and_unfinished_ones) {
  const std::string bin = std::string(SATURN_BIN_DIR) + "/saturn-arena";
  if (::access(bin.c_str(), X_OK) != 0)
    GTEST_SKIP() << bin << " is not built";
  const auto [pid, port] =
      start_server("saturn-arena", {"--tls-port", "0", "--threads", "2", "--stop-grace-ms", "3000", "--data", "/nonexistent"});
  ASSERT_GT(pid, 0);
  const int idle = connect_retrying(port);
  ASSERT_GE(idle, 0) << "saturn-arena did not start";
  const std::string get = "GET /pipeline HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(::write(idle, get.data(), get.size()), static_cast<ssize_t>(get.size()));
  const std::string first = read_some(idle, 1);
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first;
  const int upload = connect_retrying(port);
  ASSERT_GE(upload, 0);
  const std::string half = "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n12345";
  ASSERT_EQ(::write(upload, half.data(), half.size()), static_cast<ssize_t>(half.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(connect_refused(port)) << "a connection was accepted after SIGTERM";
  EXPECT_EQ(read_some(idle, 1), "");
  EXPECT_EQ(read_some(upload, 1), "");
  const int status = exit_status_within_5s(pid);
  ::close(idle);
  ::close(upload);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
}

INSTANTIATE_TEST_SUITE_P(apps, server_cli, ::testing::Values("saturn-echo", "saturn-http"),
                         [](const auto& p) { return std::string(p.param).substr(7); });

}  // namespace
