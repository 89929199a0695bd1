// The HTTP server under injected faults (saturn/testing/fault_injection.hpp), fixed
// seeds: receives and sends cut short must still give every pipelined request its
// response, in order; connections whose receive fails (ECONNRESET) are closed without a
// wrong or partial answer, and the server keeps serving the others.
#include "http_test_support.hpp"

#include <gtest/gtest.h>
#include <saturn/testing/fault_injection.hpp>

#include <cerrno>

using namespace std::chrono_literals;
using http_test::client;
using http_test::test_server;
using saturn::testing::fault_plan;
using saturn::testing::fault_scope;
using saturn::testing::op_kind;

namespace {

std::string pipelined(int n, int base) {
  std::string batch;
  for (int i = 0; i < n; ++i)
    batch += "GET /seq/" + std::to_string(base + i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
  return batch;
}

}  // namespace

TEST(http_faults, short_receives_and_sends_keep_pipelined_responses_in_order) {
  fault_plan plan{.seed = 8};
  plan.rules = {{op_kind::recv, 0, 0.5}, {op_kind::send, 0, 0.5}};
  fault_scope scope(plan);  // before the server: its workers' rings pick the plan up
  test_server srv;
  for (int conn = 0; conn < 4; ++conn) {
    client c(srv.port());
    c.send(pipelined(100, conn * 1000));
    for (int i = 0; i < 100; ++i) {
      auto r = c.read_response();
      ASSERT_TRUE(r) << "connection " << conn << " response " << i;
      EXPECT_EQ(r->status, 200);
      ASSERT_EQ(r->body, std::to_string(conn * 1000 + i)) << "connection " << conn << " response " << i;
    }
  }
  EXPECT_GT(scope.stats().shorts_of(op_kind::recv), 0u) << "no short receive injected: nothing was checked";
}

TEST(http_faults, reset_connections_get_no_wrong_answer_and_others_are_served) {
  fault_plan plan{.seed = 21};
  plan.rules = {{op_kind::recv, ECONNRESET, 0.3}};
  fault_scope scope(plan);
  test_server srv;
  int served = 0, cut = 0;
  for (int conn = 0; conn < 40; ++conn) {
    client c(srv.port());
    c.send(pipelined(3, conn * 10));
    int got = 0;
    for (int i = 0; i < 3; ++i) {
      auto r = c.read_response(2s);
      if (!r)
        break;
      ASSERT_EQ(r->status, 200);
      ASSERT_EQ(r->body, std::to_string(conn * 10 + i)) << "a wrong answer on connection " << conn;
      ++got;
    }
    if (got == 3)
      ++served;
    else {
      EXPECT_TRUE(c.eof) << "connection " << conn << " neither answered nor closed";
      ++cut;
    }
  }
  EXPECT_GT(served, 0);
  EXPECT_GT(cut, 0) << "no receive failed: nothing was checked";
  EXPECT_GT(scope.stats().errors_of(op_kind::recv), 0u);
}
