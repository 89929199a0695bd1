// 10,000 TCP connections held open at once on one runtime, every echo checked (twice:
// once while connecting, once after all are open), with RLIMIT_NOFILE raised for it.
#include "net_util.hpp"

#include <saturn/sync/wait_group.hpp>
#include <saturn/task/join_handle.hpp>

#include "support/fd_limit.hpp"

#include <gtest/gtest.h>

#include <saturn/task/time.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

using namespace net_test;
using saturn::runtime;

namespace {

constexpr int k_conns = 10000;

struct shared_state {
  saturn::wait_group connected;   // every client connected and echoed once
  saturn::wait_group release;     // the main task lets everyone do round two
  saturn::wait_group finished;
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
};

task<void> server(net::tcp_listener* l, int n) {
  saturn::task_context& root = co_await saturn::this_task::context();
  for (int i = 0; i < n; ++i) {
    auto c = co_await l->accept();
    CO_ASSERT_OK(c);
    (void)saturn::spawn_in(root, echo_stream(std::move(*c), nullptr));
  }
}

task<bool> round_trip(net::tcp_stream& c, std::uint32_t seed) {
  auto msg = pattern(32, seed);
  auto tx = c.send(msg);
  if (!(co_await tx).has_value())
    co_return false;
  auto back = co_await read_exactly(c, msg.size());
  co_return back == msg;
}

task<void> client(std::uint16_t port, std::uint32_t id, shared_state* st) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  bool good = c.has_value() && co_await round_trip(*c, id);
  st->connected.done();
  if (good) {
    auto w = st->release.wait();
    (void)co_await w;
    good = co_await round_trip(*c, id + 1'000'000);  // all 10,000 are open now
  }
  (good ? st->ok : st->failed).fetch_add(1);
  st->finished.done();
}

// The clients run in a forked child (each process then needs ~10,000 fds, within the
// usual hard limit of 20,000); the server runs here.
task<void> client_main(std::uint16_t port, shared_state* st) {
  saturn::task_context& root = co_await saturn::this_task::context();
  st->release.add(1);
  st->finished.add(k_conns);
  // Connect in waves of 1,000 so the accept queue (somaxconn) never overflows.
  for (int wave = 0; wave < k_conns; wave += 1000) {
    st->connected.add(1000);
    for (int i = wave; i < wave + 1000; ++i)
      (void)saturn::spawn_in(root, client(port, static_cast<std::uint32_t>(i), st));
    auto w = st->connected.wait();
    (void)co_await w;
  }
  st->release.done();
  auto f = st->finished.wait();
  (void)co_await f;
}

}  // namespace

TEST(Scale, TenThousandConcurrentConnectionsEchoCorrectly) {
  const rlim_t need = k_conns + 500;
  if (const std::string why = saturn_test::fd_limit_shortfall(need); !why.empty())
    GTEST_SKIP() << why;
  saturn_test::fd_limit_guard limit(need);
  ASSERT_EQ(limit.result(), 0);
  net::listen_options o;
  o.backlog = 4096;
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), o);
  ASSERT_TRUE(l.has_value());
  const std::uint16_t port = l->local_address()->port();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    l->close();
    shared_state st;
    {
      runtime rt;
      rt.block_on(client_main(port, &st));
    }
    ::_exit(st.ok.load() == k_conns && st.failed.load() == 0 ? 0 : 1);
  }
  {
    runtime rt;
    rt.block_on(server(&*l, k_conns));
    // Keep serving until the child is done with its second round and exits.
    rt.block_on([](pid_t pid) -> task<> {
      for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
          EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a client saw a wrong echo or failed";
          co_return;
        }
        auto z = saturn::sleep_for(std::chrono::milliseconds(5));
        (void)co_await z;
      }
    }(child));
  }
}
