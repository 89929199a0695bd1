// HTTP soak: SATURN_SOAK_REQUESTS requests (50,000 in `make test`, 1,000,000 in
// `make soak`) from 4 client threads over keep-alive connections (pipelined batches),
// short-lived connections, malformed requests, connections reset mid-request and slow
// clients. Checks that every good request got its correct answer, that RSS at the end is
// within 10% of RSS after the warm-up (the first tenth), and that the open descriptors
// come back to their count before the load.
#include "http_test_support.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <saturn/task/frame_allocator.hpp>
#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using http_test::client;
using http_test::test_server;

namespace {

using http_test::rss_kib;

int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d))
    n += e->d_name[0] != '.' ? 1 : 0;
  ::closedir(d);
  return n - 1;  // the DIR's own descriptor
}

struct soak_counts {
  std::atomic<long> sent{0};       // requests sent (good, malformed or cut)
  std::atomic<long> good{0};       // good requests sent
  std::atomic<long> answered{0};   // good requests answered correctly
  std::atomic<long> wrong{0};      // anything unexpected
};

/// One unit of client work; returns the requests it sent.
long one_round(std::uint16_t port, long round, soak_counts& c) {
  const int kind = static_cast<int>(round % 20);
  if (kind < 12) {  // keep-alive: 5 pipelined batches of 10
    client cl(port);
    for (int b = 0; b < 5; ++b) {
      std::string batch;
      for (int i = 0; i < 10; ++i)
        batch += "GET /seq/" + std::to_string(round * 100 + b * 10 + i) + " HTTP/1.1\r\nHost: s\r\n\r\n";
      cl.send(batch);
      c.good += 10;
      for (int i = 0; i < 10; ++i) {
        auto r = cl.read_response();
        if (r && r->status == 200 && r->body == std::to_string(round * 100 + b * 10 + i))
          ++c.answered;
        else
          ++c.wrong;
      }
    }
    return 50;
  }
  if (kind < 16) {  // short-lived: one request, Connection: close
    client cl(port);
    cl.send("GET /plaintext HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n");
    ++c.good;
    auto r = cl.read_response();
    if (r && r->status == 200 && r->body == "Hello, World!" && cl.read_until_close())
      ++c.answered;
    else
      ++c.wrong;
    return 1;
  }
  if (kind < 18) {  // malformed: 400 then close
    client cl(port);
    cl.send("GET /plaintext HTTP/1.1\r\nHost: s\r\nContent-Length: 12x\r\n\r\n");
    auto r = cl.read_response();
    if (!r || r->status != 400 || !cl.read_until_close())
      ++c.wrong;
    return 1;
  }
  if (kind == 18) {  // reset mid-request (RST, not FIN)
    client cl(port);
    cl.send("GET /seq/1 HTTP/1.1\r\nHo");
    linger l{1, 0};
    ::setsockopt(cl.fd(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
    return 1;  // the destructor closes: RST
  }
  // slow client: the head in three pieces
  client cl(port);
  const std::string req = "GET /seq/" + std::to_string(round) + " HTTP/1.1\r\nHost: s\r\n\r\n";
  cl.send(req.substr(0, 7));
  std::this_thread::sleep_for(1ms);
  cl.send(req.substr(7, 9));
  std::this_thread::sleep_for(1ms);
  cl.send(req.substr(16));
  ++c.good;
  auto r = cl.read_response();
  if (r && r->status == 200 && r->body == std::to_string(round))
    ++c.answered;
  else
    ++c.wrong;
  return 1;
}


}  // namespace

TEST(http_soak, mixed_clients_leak_nothing) {
  const char* env = std::getenv("SATURN_SOAK_REQUESTS");
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  constexpr long default_total = 10'000;  // the sanitizers' own memory (quarantine) is not ours to bound
#else
  constexpr long default_total = 50'000;
#endif
  const long total = env != nullptr ? std::atol(env) : default_total;
  test_server srv;
  const int fds_before = open_fds();
  soak_counts c;
  long warm_rss = 0;
  std::atomic<long> next_round{0};
  auto drive = [&](long until) {
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&] {
        while (c.sent.load() < until)
          c.sent += one_round(srv.port(), next_round++, c);
      });
    for (auto& t : ts)
      t.join();
  };
  drive(total / 10);  // warm-up: pools, buffers and caches reach their working size
  ASSERT_TRUE(saturn_test::wait_until([&] { return open_fds() == fds_before; }, 5s, 10ms)) << "fds after warm-up: " << open_fds();
  warm_rss = rss_kib();
  const std::size_t warm_frames = saturn::task_memory_mapped();
  drive(total);
  EXPECT_EQ(c.wrong.load(), 0);
  EXPECT_EQ(c.answered.load(), c.good.load()) << "good requests not answered correctly";
  EXPECT_TRUE(saturn_test::wait_until([&] { return open_fds() == fds_before; }, 10s, 10ms))
      << "descriptors: " << open_fds() << " now, " << fds_before << " before the load";
  const long end_rss = rss_kib();
  const std::size_t end_frames = saturn::task_memory_mapped();
#if !defined(SATURN_ASAN) && !defined(SATURN_TSAN)
  EXPECT_LE(end_rss, warm_rss + warm_rss / 10)
      << "RSS grew: " << warm_rss << " KiB after warm-up, " << end_rss << " KiB at the end (coroutine frames: "
      << warm_frames / 1024 << " -> " << end_frames / 1024 << " KiB mapped)";
#endif
  std::fprintf(stderr, "# soak: %ld requests (%ld good, all answered), RSS %ld -> %ld KiB, frames %zu -> %zu KiB, fds %d\n",
               c.sent.load(), c.good.load(), warm_rss, end_rss, warm_frames / 1024, end_frames / 1024, open_fds());
}
