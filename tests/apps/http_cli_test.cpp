// saturn-http's command line: a bad argument is refused with a message naming it and exit
// status 2 (--port 0 used to bind a port nobody learnt, --threads 300 died in
// std::terminate, --max-body -5 and --header-timeout-ms -5 started a server); a port in
// use exits 1 naming it; SIGINT and SIGTERM stop a serving process with status 0.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/run_program.hpp"

namespace {

namespace net = saturn::net;
const std::string k_bin = std::string(SATURN_BIN_DIR) + "/saturn-http";

saturn_test::program_outcome run(std::vector<std::string> args, int sig = 0) {
  return saturn_test::run_program(k_bin, std::move(args), sig);
}

TEST(http_cli, bad_arguments_exit_2_naming_the_option) {
  ASSERT_EQ(::access(k_bin.c_str(), X_OK), 0) << k_bin << " is not built";
  const struct {
    std::vector<std::string> args;
    const char* names;
  } cases[] = {
      {{"--port", "70000", "--threads", "1"}, "--port"},
      {{"--port", "0", "--threads", "1"}, "--port"},
      {{"--port", "-1"}, "--port"},
      {{"--port", "5000", "--threads", "0"}, "--threads"},
      {{"--port", "5000", "--threads", "300"}, "--threads"},
      {{"--port", "5000", "--max-connections", "0"}, "--max-connections"},
      {{"--port", "5000", "--header-timeout-ms", "-5"}, "--header-timeout-ms"},
      {{"--port", "5000", "--idle-timeout-ms", "0"}, "--idle-timeout-ms"},
      {{"--port", "5000", "--max-body", "-5"}, "--max-body"},
      {{"--port", "5000", "--spin-us", "x"}, "--spin-us"},
      {{"--port", "5000", "--bogus"}, "--bogus"},
  };
  for (const auto& c : cases) {
    const auto o = run(c.args);
    EXPECT_EQ(o.status, 2) << c.args[0] << " " << c.args[1] << " " << c.args.back() << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << o.err;
  }
  EXPECT_EQ(run({"--help"}).status, 0);
}

TEST(http_cli, port_in_use_exits_1_naming_the_port) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), {.reuse_addr = false});
  ASSERT_TRUE(l.has_value());
  const std::string port = std::to_string(l->local_address()->port());
  const auto o = run({"--port", port, "--threads", "1"});
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("127.0.0.1:" + port), std::string::npos) << o.err;
}

TEST(http_cli, sigint_and_sigterm_exit_0) {
  for (int sig : {SIGINT, SIGTERM}) {
    auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
    ASSERT_TRUE(l.has_value());
    const std::string port = std::to_string(l->local_address()->port());
    l->close();
    const auto o = run({"--port", port, "--threads", "2"}, sig);
    EXPECT_EQ(o.status, 0) << "signal " << sig << ": " << o.err;
  }
}

}  // namespace
