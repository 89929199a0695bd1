// Tasks under injected faults (saturn/testing/fault_injection.hpp): coroutine I/O that
// is cut short or fails with EINTR/EAGAIN/ECANCELED, on one loop and across the workers
// of a thread_pool, with fixed seeds. Oracles: an exact byte stream through pipes (no byte
// lost, duplicated or reordered), every error returned as a value that names its
// operation, the injector's counts matching what the tasks saw, no task left behind.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include <saturn/testing/fault_injection.hpp>

#include "loop/test_support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <string>
#include <vector>

namespace {

using saturn::task;
using saturn::testing::fault_plan;
using saturn::testing::fault_scope;
using saturn::testing::op_kind;

struct io_tally {
  std::atomic<int> retried{0};  // EINTR / EAGAIN seen and retried
  std::atomic<int> unnamed{0};  // an error whose operation name was wrong
};

bool retryable(const saturn::error& e) {
  return e == std::errc::interrupted || e == std::errc::resource_unavailable_try_again;
}

/// Writes all of `data`, resubmitting the rest after short writes and retryable errors.
task<bool> write_all(int fd, std::string data, io_tally* t) {
  std::size_t done = 0;
  while (done < data.size()) {
    auto r = co_await saturn::write(fd, std::as_bytes(std::span(data)).subspan(done));
    if (!r) {
      if (std::string(r.err().operation) != "write")
        t->unnamed.fetch_add(1);
      if (!retryable(r.err()))
        co_return false;
      t->retried.fetch_add(1);
      continue;
    }
    done += *r;
  }
  auto closed = co_await saturn::close(fd);  // EOF for the reader
  co_return closed.has_value();
}

/// Reads until EOF, retrying retryable errors.
task<std::string> read_to_eof(int fd, io_tally* t) {
  std::string got;
  std::vector<std::byte> buf(8192);
  for (;;) {
    auto r = co_await saturn::read(fd, buf);
    if (!r) {
      if (std::string(r.err().operation) != "read")
        t->unnamed.fetch_add(1);
      if (!retryable(r.err()))
        co_return "error: " + r.err().message();
      t->retried.fetch_add(1);
      continue;
    }
    if (*r == 0)
      co_return got;
    got.append(reinterpret_cast<const char*>(buf.data()), *r);
  }
}

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s)
    c = static_cast<char>(rng());
  return s;
}

fault_plan io_plan(std::uint64_t seed) {
  fault_plan plan{.seed = seed};
  plan.rules = {{op_kind::write, 0, 0.3}, {op_kind::read, 0, 0.3},        {op_kind::write, EINTR, 0.1},
                {op_kind::read, EAGAIN, 0.1}, {op_kind::read, EINTR, 0.05}, {op_kind::write, EAGAIN, 0.05}};
  return plan;
}

task<std::string> pipe_round(std::string data, io_tally* t) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    co_return "pipe2 failed";
  auto reader = saturn::spawn_in((co_await saturn::this_task::context()).sched->root_context(), read_to_eof(fds[0], t));
  const bool ok = co_await write_all(fds[1], std::move(data), t);
  std::string got = co_await std::move(reader);
  ::close(fds[0]);
  co_return ok ? got : "writer failed";
}

class task_faults : public ::testing::TestWithParam<std::uint64_t> {};
INSTANTIATE_TEST_SUITE_P(seeds, task_faults, ::testing::Values(3u, 11u, 2024u));

TEST_P(task_faults, pipe_streams_on_one_loop_are_exact) {
  fault_scope scope(io_plan(GetParam()));
  saturn::runtime rt;
  io_tally t;
  const std::string data = random_bytes(300'000, GetParam());
  const std::string got = rt.block_on(pipe_round(data, &t));
  ASSERT_EQ(got.size(), data.size()) << got.substr(0, 200);
  EXPECT_TRUE(got == data) << "bytes lost, duplicated or reordered";
  EXPECT_EQ(t.unnamed.load(), 0);
  EXPECT_GT(scope.stats().total_shorts(), 0u);
  EXPECT_EQ(static_cast<std::uint64_t>(t.retried.load()), scope.stats().total_errors());
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST_P(task_faults, many_streams_across_pool_workers_are_exact) {
  fault_scope scope(io_plan(GetParam()));
  io_tally t;
  int exact = 0;
  {
    saturn::thread_pool pool({.threads = 2});
    std::vector<saturn::join_handle<std::string>> hs;
    std::vector<std::string> sent;
    for (int i = 0; i < 16; ++i) {
      sent.push_back(random_bytes(40'000 + 997 * static_cast<std::size_t>(i), GetParam() + static_cast<std::uint64_t>(i)));
      hs.push_back(pool.spawn(pipe_round(sent.back(), &t)));
    }
    for (std::size_t i = 0; i < hs.size(); ++i)
      exact += pool.block_on([](saturn::join_handle<std::string> h) -> task<std::string> {
                 co_return co_await std::move(h);
               }(std::move(hs[i]))) == sent[i]
                   ? 1
                   : 0;
  }
  EXPECT_EQ(exact, 16);
  EXPECT_EQ(t.unnamed.load(), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(t.retried.load()), scope.stats().total_errors());
}

// A non-retryable injected error ends the await with that error, named, and the task
// carries on (no exception, no hang); with_timeout over a faulted operation still ends.
TEST(task_faults_errors, non_retryable_errors_come_back_named) {
  fault_plan plan{.seed = 9};
  plan.rules = {{op_kind::read, ECONNRESET, 1.0}, {op_kind::nop, ECANCELED, 1.0}};
  fault_scope scope(plan);
  saturn::runtime rt;
  saturn_test::pipe_fds p;
  const std::string what = rt.block_on([](int fd) -> task<std::string> {
    std::byte b[4];
    auto r = co_await saturn::read(fd, b);
    auto n = co_await saturn::nop();
    auto w = co_await saturn::with_timeout(std::chrono::seconds(5), [](int f) -> task<std::size_t> {
      std::byte c[4];
      auto rr = co_await saturn::read(f, c);
      co_return rr ? *rr : 0;
    }(fd));
    co_return (r ? std::string("ok") : r.err().message()) + " | " + (n ? std::string("ok") : n.err().message()) +
        " | " + (w ? std::to_string(*w) : w.err().message());
  }(p.r));
  EXPECT_EQ(what, "read: " + std::make_error_code(std::errc::connection_reset).message() + " | nop: " +
                      std::make_error_code(std::errc::operation_canceled).message() + " | 0");
  EXPECT_EQ(scope.stats().errors_of(op_kind::read), 2u);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

}  // namespace
