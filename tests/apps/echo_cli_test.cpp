// saturn-echo's command line: a bad argument is refused with a message naming it and exit
// status 2 (never wrapped: --port 70000 used to bind port 4464; never deferred: --buffers 3
// used to start a server that reset every connection); a port in use exits 1 naming it;
// SIGINT, like SIGTERM, stops a serving process with status 0.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/run_program.hpp"

namespace {

namespace net = saturn::net;
const std::string k_bin = std::string(SATURN_BIN_DIR) + "/saturn-echo";

using outcome = saturn_test::program_outcome;

outcome run(std::vector<std::string> args, int sig = 0) { return saturn_test::run_program(k_bin, std::move(args), sig); }

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
