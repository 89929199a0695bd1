// net::resolve against a real resolver (dnsmasq on 127.0.0.1, started and stopped here):
// A and AAAA records and the family filter, the port in every address, NXDOMAIN, an
// answer too big for UDP (TC, then TCP), a server that never answers (the timeout and its
// bounds), numeric hosts and the hosts file without any query, 100 resolves at once,
// resolves on a work-stealing pool, and cancellation leaving no poll in flight.
#include "net/dns_server.hpp"
#include "net_util.hpp"

#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/time.hpp>
#include <saturn/task/when_all.hpp>
#include <saturn/task/when_any.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace net_test;
using saturn::result;
using saturn::runtime;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

using addresses = std::vector<net::address>;

std::set<std::string> hosts_of(const addresses& v) {
  std::set<std::string> s;
  for (const auto& a : v)
    s.insert(a.host());
  return s;
}

class resolve_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_dns = new dns_test::dnsmasq; }
  static void TearDownTestSuite() {
    delete s_dns;
    s_dns = nullptr;
  }
  void SetUp() override {
    if (dns_test::dnsmasq_path().empty())
      GTEST_SKIP() << "dnsmasq is not installed (apt-get install dnsmasq, or scripts/deps test): "
                      "the DNS tests need a real resolver on 127.0.0.1";
    ASSERT_TRUE(s_dns->running()) << "dnsmasq did not start; its log:\n" << s_dns->log();
  }
  /// Options that ask the test's dnsmasq only.
  static net::resolve_options local(net::ip_family f = net::ip_family::any) {
    net::resolve_options o;
    o.family = f;
    o.servers = {s_dns->server()};
    o.timeout = 1000ms;
    o.tries = 2;
    return o;
  }
  /// Runs resolve on a fresh runtime; checks no operation is left in flight.
  static result<addresses> run(std::string host, std::uint16_t port, net::resolve_options o) {
    runtime rt;
    auto r = rt.block_on(net::resolve(host, port, std::move(o)));
    EXPECT_EQ(rt.loop().in_flight(), 0u);
    return r;
  }
  static dns_test::dnsmasq* s_dns;
};
dns_test::dnsmasq* resolve_test::s_dns = nullptr;

TEST_F(resolve_test, a_record_with_the_port_set) {
  auto r = run("a.test", 8080, local());
  ASSERT_TRUE(r.has_value()) << r.err().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].to_string(), "127.0.0.2:8080");
}

TEST_F(resolve_test, aaaa_record_and_the_family_filter) {
  auto any = run("v6.test", 53, local());
  ASSERT_TRUE(any.has_value()) << any.err().message();
  ASSERT_EQ(any->size(), 1u);
  EXPECT_EQ((*any)[0].to_string(), "[::1]:53");

  auto v6 = run("v6.test", 53, local(net::ip_family::v6));
  ASSERT_TRUE(v6.has_value()) << v6.err().message();
  EXPECT_EQ(hosts_of(*v6), std::set<std::string>{"::1"});

  auto v4 = run("v6.test", 53, local(net::ip_family::v4));
  ASSERT_FALSE(v4.has_value());
  EXPECT_TRUE(net::is(v4.err(), net::resolve_errc::no_data)) << v4.err().message();
  EXPECT_NE(v4.err().message().find("resolve v6.test"), std::string::npos) << v4.err().message();
}

TEST_F(resolve_test, both_families_and_each_alone) {
  auto any = run("both.test", 7, local());
  ASSERT_TRUE(any.has_value()) << any.err().message();
  EXPECT_EQ(hosts_of(*any), (std::set<std::string>{"127.0.0.2", "::1"}));
  for (const auto& a : *any)
    EXPECT_EQ(a.port(), 7);
  auto v4 = run("both.test", 7, local(net::ip_family::v4));
  ASSERT_TRUE(v4.has_value()) << v4.err().message();
  EXPECT_EQ(hosts_of(*v4), std::set<std::string>{"127.0.0.2"});
  auto v6 = run("both.test", 7, local(net::ip_family::v6));
  ASSERT_TRUE(v6.has_value()) << v6.err().message();
  EXPECT_EQ(hosts_of(*v6), std::set<std::string>{"::1"});
}

TEST_F(resolve_test, nxdomain_names_the_host) {
  auto r = run("nope.test", 80, local());
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(net::is(r.err(), net::resolve_errc::not_found)) << r.err().message();
  const std::string m = r.err().message();
  EXPECT_EQ(m.rfind("resolve nope.test: no such host (NXDOMAIN)", 0), 0u) << m;
}

TEST_F(resolve_test, truncated_answer_is_completed_over_tcp) {
  // dnsmasq's own UDP answer is truncated (TC set): the full list can only come by TCP.
  const int flags = dns_test::udp_query_flags(s_dns->port(), "big.test");
  ASSERT_GE(flags, 0) << "no UDP answer from dnsmasq";
  ASSERT_NE(flags & 0x0200, 0) << "dnsmasq did not truncate the UDP answer; the test proves nothing";
  auto r = run("big.test", 443, local(net::ip_family::v4));
  ASSERT_TRUE(r.has_value()) << r.err().message();
  const auto want = dns_test::big_addresses();
  EXPECT_EQ(hosts_of(*r), std::set<std::string>(want.begin(), want.end()));
  EXPECT_EQ(r->size(), want.size());
  for (const auto& a : *r)
    EXPECT_EQ(a.port(), 443);
}

TEST_F(resolve_test, silent_server_times_out_after_every_try) {
  dns_test::silent_server silent;
  net::resolve_options o;
  o.servers = {silent.server()};
  o.family = net::ip_family::v4;
  o.timeout = 200ms;
  o.tries = 2;
  const auto t0 = clock_type::now();
  auto r = run("a.test", 80, o);
  const auto took = clock_type::now() - t0;
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.err() == std::errc::timed_out) << r.err().message();
  EXPECT_TRUE(net::is(r.err(), net::resolve_errc::timed_out));
  const std::string m = r.err().message();
  EXPECT_NE(m.find("resolve a.test (2 tries against " + silent.server() + ")"), std::string::npos) << m;
  // c-ares doubles the timeout on the second round: 200 + 400 ms.
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 1500ms);
  EXPECT_EQ(silent.drain(), 2) << "one query per try";
}

TEST_F(resolve_test, no_server_listening_is_refused_at_once) {
  net::resolve_options o;
  o.servers = {"127.0.0.1:" + std::to_string(dns_test::free_port())};  // nothing bound there
  o.timeout = 2000ms;
  o.tries = 2;
  const auto t0 = clock_type::now();
  auto r = run("a.test", 80, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(net::is(r.err(), net::resolve_errc::connection_refused)) << r.err().message();
  EXPECT_NE(r.err().message().find("resolve a.test (asked " + o.servers[0] + ")"), std::string::npos)
      << r.err().message();
  EXPECT_LT(clock_type::now() - t0, 1000ms) << "the ICMP refusal should end it, not the timeout";
}

TEST_F(resolve_test, numeric_hosts_need_no_server) {
  dns_test::silent_server silent;
  net::resolve_options o;
  o.servers = {silent.server()};
  o.timeout = 2000ms;
  const auto t0 = clock_type::now();
  auto v4 = run("192.0.2.7", 9, o);
  ASSERT_TRUE(v4.has_value()) << v4.err().message();
  ASSERT_EQ(v4->size(), 1u);
  EXPECT_EQ((*v4)[0].to_string(), "192.0.2.7:9");
  auto v6 = run("2001:db8::1", 9, o);
  ASSERT_TRUE(v6.has_value()) << v6.err().message();
  EXPECT_EQ((*v6)[0].to_string(), "[2001:db8::1]:9");
  auto bracketed = run("[::1]", 9, o);
  ASSERT_TRUE(bracketed.has_value()) << bracketed.err().message();
  EXPECT_EQ((*bracketed)[0].to_string(), "[::1]:9");
  EXPECT_LT(clock_type::now() - t0, 500ms);
  EXPECT_EQ(silent.drain(), 0) << "a numeric host sent a query";

  o.family = net::ip_family::v6;
  auto wrong = run("192.0.2.7", 9, o);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_TRUE(net::is(wrong.err(), net::resolve_errc::no_data)) << wrong.err().message();
}

TEST_F(resolve_test, localhost_comes_from_the_hosts_file_without_a_query) {
  dns_test::silent_server silent;  // a query would wait here for 2 s
  net::resolve_options o;
  o.servers = {silent.server()};
  o.timeout = 2000ms;
  o.tries = 1;
  o.family = net::ip_family::v4;
  const auto t0 = clock_type::now();
  auto r = run("localhost", 631, o);
  EXPECT_LT(clock_type::now() - t0, 500ms);
  ASSERT_TRUE(r.has_value()) << r.err().message();
  EXPECT_TRUE(hosts_of(*r).count("127.0.0.1")) << (*r)[0].to_string();
  EXPECT_EQ((*r)[0].port(), 631);
  EXPECT_EQ(silent.drain(), 0) << "localhost was asked of the DNS server";
}

TEST_F(resolve_test, bad_input_is_an_error_not_a_query) {
  auto empty = run("", 80, local());
  ASSERT_FALSE(empty.has_value());
  EXPECT_TRUE(empty.err() == std::errc::invalid_argument);
  net::resolve_options o = local();
  o.servers = {"not a server"};
  auto bad = run("a.test", 80, o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_TRUE(bad.err() == std::errc::invalid_argument) << bad.err().message();
  EXPECT_NE(bad.err().message().find("not a server"), std::string::npos) << bad.err().message();
  o = local();
  o.tries = 0;
  auto no_tries = run("a.test", 80, o);
  ASSERT_FALSE(no_tries.has_value());
  EXPECT_TRUE(no_tries.err() == std::errc::invalid_argument);
}

// 100 resolves at once on one loop, a mix of names, each with its own answer.
task<void> many(std::vector<std::string> names, net::resolve_options o, std::vector<result<addresses>>* out) {
  std::vector<task<result<addresses>>> all;
  for (const auto& n : names)
    all.push_back(net::resolve(n, 1000, o));
  *out = co_await saturn::when_all(std::move(all));
}

TEST_F(resolve_test, a_hundred_at_once_on_one_loop) {
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i)
    names.push_back(i % 4 == 0 ? "a.test" : i % 4 == 1 ? "v6.test" : i % 4 == 2 ? "nope.test" : "both.test");
  std::vector<result<addresses>> got;
  runtime rt;
  rt.block_on(many(names, local(), &got));
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  ASSERT_EQ(got.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "nope.test") {
      ASSERT_FALSE(got[i].has_value());
      EXPECT_TRUE(net::is(got[i].err(), net::resolve_errc::not_found)) << got[i].err().message();
      continue;
    }
    ASSERT_TRUE(got[i].has_value()) << names[i] << ": " << got[i].err().message();
    const auto hs = hosts_of(*got[i]);
    if (names[i] == "a.test")
      EXPECT_EQ(hs, std::set<std::string>{"127.0.0.2"});
    else if (names[i] == "v6.test")
      EXPECT_EQ(hs, std::set<std::string>{"::1"});
    else
      EXPECT_EQ(hs, (std::set<std::string>{"127.0.0.2", "::1"}));
  }
}

// On a pool whose woken tasks may move between workers (no pinning), so a resolve's
// turns run on different threads.
TEST_F(resolve_test, on_a_work_stealing_pool) {
  saturn::pool_options po;
  po.threads = 2;
  po.pin_io_wakeups = false;
  saturn::thread_pool pool(po);
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i)
    names.push_back(i % 3 == 0 ? "big.test" : i % 3 == 1 ? "a.test" : "nope.test");
  std::vector<result<addresses>> got;
  pool.block_on(many(names, local(net::ip_family::v4), &got));
  ASSERT_EQ(got.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "nope.test") {
      EXPECT_FALSE(got[i].has_value());
      continue;
    }
    ASSERT_TRUE(got[i].has_value()) << names[i] << ": " << got[i].err().message();
    EXPECT_EQ(got[i]->size(), names[i] == "big.test" ? dns_test::big_addresses().size() : 1u);
  }
}

task<std::vector<result<addresses>>> many_cut_short(int n, net::resolve_options o) {
  std::vector<task<result<addresses>>> all;
  for (int i = 0; i < n; ++i)
    all.push_back(saturn::with_timeout(50ms, net::resolve("a.test", 80, o)));
  co_return co_await saturn::when_all(std::move(all));
}

// Cancellation when the resolve and its stop may be on different workers.
TEST_F(resolve_test, with_timeout_on_a_work_stealing_pool) {
  dns_test::silent_server silent;
  net::resolve_options o;
  o.servers = {silent.server()};
  o.timeout = 5000ms;
  saturn::pool_options po;
  po.threads = 2;
  po.pin_io_wakeups = false;
  saturn::thread_pool pool(po);
  const auto t0 = clock_type::now();
  auto got = pool.block_on(many_cut_short(40, o));
  EXPECT_LT(clock_type::now() - t0, 2000ms);
  ASSERT_EQ(got.size(), 40u);
  for (const auto& r : got) {
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(r.err() == std::errc::timed_out) << r.err().message();
  }
}

TEST_F(resolve_test, with_timeout_cancels_and_leaves_nothing_in_flight) {
  dns_test::silent_server silent;
  net::resolve_options o;
  o.servers = {silent.server()};
  o.timeout = 5000ms;
  runtime rt;
  const auto t0 = clock_type::now();
  auto r = rt.block_on(saturn::with_timeout(100ms, net::resolve("a.test", 80, o)));
  const auto took = clock_type::now() - t0;
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.err() == std::errc::timed_out) << r.err().message();
  EXPECT_LT(took, 1000ms);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  EXPECT_GE(silent.drain(), 1) << "the query was never sent, so nothing was cancelled";
}

task<int> nap(std::chrono::milliseconds d) {
  auto s = saturn::sleep_for(d);
  auto r = co_await s;
  co_return r ? 0 : 1;
}

task<std::size_t> lose_to_a_sleep(net::resolve_options o, std::size_t* in_flight_after) {
  auto r = co_await saturn::when_any(net::resolve("a.test", 80, o), nap(50ms));
  *in_flight_after = saturn::event_loop::current()->in_flight();
  co_return r.index();
}

TEST_F(resolve_test, when_any_loser_is_cancelled) {
  dns_test::silent_server silent;
  net::resolve_options o;
  o.servers = {silent.server()};
  o.timeout = 5000ms;
  runtime rt;
  std::size_t in_flight_after = 99;
  const auto t0 = clock_type::now();
  EXPECT_EQ(rt.block_on(lose_to_a_sleep(o, &in_flight_after)), 1u);
  EXPECT_LT(clock_type::now() - t0, 1000ms);
  EXPECT_EQ(in_flight_after, 0u);
}

}  // namespace
