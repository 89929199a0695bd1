// saturn-echo's command line: a bad argument is refused with a message naming it and exit
// status 2 (never wrapped: --port 70000 used to bind port 4464; never deferred: --buffers 3
// used to start a server that reset every connection); a port in use exits 1 naming it;
// SIGINT, like SIGTERM, stops a serving process with status 0.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace net = saturn::net;
const std::string k_bin = std::string(SATURN_BIN_DIR) + "/saturn-echo";

struct outcome {
  int status = -1;  ///< exit status, or -1 when it did not exit by itself within 5 s
  std::string err;  ///< what it wrote to stderr
};

/// Runs saturn-echo with `args`; `sig` != 0 sends that signal after 300 ms.
outcome run(std::vector<std::string> args, int sig = 0) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);  // --help's text
    std::vector<char*> argv{const_cast<char*>(k_bin.c_str())};
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(k_bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  if (sig != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, sig);
  }
  outcome o;
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  } else if (WIFEXITED(status)) {
    o.status = WEXITSTATUS(status);
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0)
    o.err.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  return o;
}

TEST(echo_cli, bad_arguments_exit_2_naming_the_option) {
  ASSERT_EQ(::access(k_bin.c_str(), X_OK), 0) << k_bin << " is not built";
  const struct {
    std::vector<std::string> args;
    const char* names;
  } cases[] = {
      {{"--port", "70000", "--threads", "1"}, "--port"},
      {{"--port", "0", "--threads", "1"}, "--port"},
      {{"--port", "-1"}, "--port"},
      {{"--threads", "1"}, "--port"},
      {{"--port", "5000", "--threads", "0"}, "--threads"},
      {{"--port", "5000", "--threads", "100000"}, "--threads"},
      {{"--port", "5000", "--buffers", "3"}, "--buffers"},
      {{"--port", "5000", "--buffers", "65536"}, "--buffers"},
      {{"--port", "5000", "--buffer-size", "0"}, "--buffer-size"},
      {{"--port", "5000", "--bogus"}, "--bogus"},
      {{"--port", "5000", "--accept", "sideways"}, "--accept"},
  };
  for (const auto& c : cases) {
    const outcome o = run(c.args);
    EXPECT_EQ(o.status, 2) << c.args[0] << " " << c.args[1] << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << o.err;
  }
  EXPECT_EQ(run({"--help"}).status, 0);
}

TEST(echo_cli, port_in_use_exits_1_naming_the_port) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), {.reuse_addr = false});
  ASSERT_TRUE(l.has_value());
  const std::string port = std::to_string(l->local_address()->port());
  const outcome o = run({"--port", port, "--threads", "1"});
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("127.0.0.1:" + port), std::string::npos) << o.err;
}

TEST(echo_cli, sigint_and_sigterm_exit_0) {
  for (int sig : {SIGINT, SIGTERM}) {
    auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
    ASSERT_TRUE(l.has_value());
    const std::string port = std::to_string(l->local_address()->port());
    l->close();
    const outcome o = run({"--port", port, "--threads", "2"}, sig);
    EXPECT_EQ(o.status, 0) << "signal " << sig << ": " << o.err;
  }
}

}  // namespace
