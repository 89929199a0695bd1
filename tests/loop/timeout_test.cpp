// Kernel timeouts (IORING_OP_TIMEOUT) and linked timeouts: expiry is 0 in the callback
// tier and -ETIME in the raw tier, cancellation is -ECANCELED; read_with_timeout in both
// orders (data first, deadline first), including when the link meets a full SQ.
#include <saturn/ext/submit.hpp>
#include <cerrno>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::clock;
using saturn::event_loop;
using saturn::kernel_timespec;
using saturn::loop_options;

class timeout : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts(unsigned entries = 256) const { return loop_options{.entries = entries, .defer_taskrun = GetParam()}; }
};

TEST_P(timeout, callback_expiry_is_zero_and_not_early) {
  event_loop loop(opts());
  int res = 1;
  int calls = 0;
  clock::time_point fired{};
  const auto start = clock::now();
  loop.timeout(10ms, [&](int r) {
    res = r;
    ++calls;
    fired = clock::now();
  });
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(res, 0);
  EXPECT_GE(fired - start, 10ms);
  EXPECT_LT(fired - start, 1s);
}

TEST_P(timeout, raw_expiry_is_etime) {
  event_loop loop(opts());
  raw_op op;
  const kernel_timespec ts = kernel_timespec::from(2ms);
  saturn::ext::submit_timeout(loop, &op, &ts);
  loop.run();
  EXPECT_EQ(op.calls, 1);
  EXPECT_EQ(op.res, -ETIME);
}

TEST_P(timeout, raw_absolute_deadline) {
  event_loop loop(opts());
  ::timespec now{};
  ASSERT_EQ(::clock_gettime(CLOCK_MONOTONIC, &now), 0);
  const std::int64_t deadline_ns = now.tv_sec * 1'000'000'000LL + now.tv_nsec + 10'000'000;
  const kernel_timespec ts{deadline_ns / 1'000'000'000, deadline_ns % 1'000'000'000};
  raw_op op;
  saturn::ext::submit_timeout(loop, &op, &ts, /*absolute=*/true);
  loop.run();
  EXPECT_EQ(op.res, -ETIME);
  ::timespec after{};
  ::clock_gettime(CLOCK_MONOTONIC, &after);
  EXPECT_GE(after.tv_sec * 1'000'000'000LL + after.tv_nsec, deadline_ns);
}

TEST_P(timeout, zero_and_negative_durations_expire_at_once) {
  event_loop loop(opts());
  int a = 1;
  int b = 1;
  loop.timeout(0ns, [&](int r) { a = r; });
  loop.timeout(-5ms, [&](int r) { b = r; });
  watchdog dog(5s, "a zero timeout did not expire");
  loop.run();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 0);
}

TEST_P(timeout, cancel_gives_ecanceled) {
  event_loop loop(opts());
  int tres = 1;
  int tcalls = 0;
  int cres = 1;
  auto h = loop.timeout(1h, [&](int r) {
    tres = r;
    ++tcalls;
  });
  loop.run_once(false);  // the timeout is in the kernel now
  loop.cancel(h, [&](int r) { cres = r; });
  watchdog dog(5s, "cancelling a 1 h timeout did not complete it");
  loop.run();
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(tcalls, 1);
  EXPECT_EQ(tres, -ECANCELED);
}

TEST_P(timeout, cancel_in_the_same_submission_batch) {
  event_loop loop(opts());
  int tres = 1;
  int cres = 1;
  auto h = loop.timeout(1h, [&](int r) { tres = r; });
  loop.cancel(h, [&](int r) { cres = r; });  // both SQEs go in one io_uring_enter
  watchdog dog(5s, "cancelling a 1 h timeout did not complete it");
  loop.run();
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(tres, -ECANCELED);
}

TEST_P(timeout, many_timeouts_expire_in_deadline_order) {
  event_loop loop(opts());
  std::vector<int> order;
  for (int i = 9; i >= 0; --i)
    loop.timeout(std::chrono::milliseconds(2 * i + 1), [&order, i](int r) {
      EXPECT_EQ(r, 0);
      order.push_back(i);
    });
  loop.run();
  ASSERT_EQ(order.size(), 10u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST_P(timeout, raw_link_timeout_fires_on_a_stuck_read) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  raw_op read_op;
  raw_op link_op;
  const kernel_timespec ts = kernel_timespec::from(5ms);
  saturn::ext::submit_read(loop, &read_op, p.r, buf, sizeof buf, 0);
  saturn::ext::link_timeout(loop, &ts, &link_op);
  loop.run();
  EXPECT_EQ(read_op.calls, 1);
  EXPECT_EQ(read_op.res, -ECANCELED);
  EXPECT_EQ(link_op.calls, 1);
  EXPECT_EQ(link_op.res, -ETIME);
}

TEST_P(timeout, raw_link_timeout_cancelled_when_read_completes) {
  event_loop loop(opts());
  pipe_fds p;
  ASSERT_EQ(::write(p.w, "ok", 2), 2);
  char buf[8];
  raw_op read_op;
  raw_op link_op;
  const kernel_timespec ts = kernel_timespec::from(1h);
  saturn::ext::submit_read(loop, &read_op, p.r, buf, sizeof buf, 0);
  saturn::ext::link_timeout(loop, &ts, &link_op);
  watchdog dog(5s, "a linked timeout outlived its read");
  loop.run();
  EXPECT_EQ(read_op.res, 2);
  EXPECT_EQ(link_op.calls, 1);
  EXPECT_EQ(link_op.res, -ECANCELED);
}

TEST_P(timeout, read_with_timeout_data_first) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8] = {};
  int res = 1;
  int calls = 0;
  loop.read_with_timeout(p.r, buf, sizeof buf, 0, 1h, [&](int r) {
    res = r;
    ++calls;
  });
  loop.after(2ms, [&] { ASSERT_EQ(::write(p.w, "data", 4), 4); });
  watchdog dog(5s, "read_with_timeout did not complete after its data arrived");
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(res, 4);
  EXPECT_EQ(std::string(buf, 4), "data");
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST_P(timeout, read_with_timeout_deadline_first) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  int res = 1;
  int calls = 0;
  const auto start = clock::now();
  clock::time_point done{};
  loop.read_with_timeout(p.r, buf, sizeof buf, 0, 10ms, [&](int r) {
    res = r;
    ++calls;
    done = clock::now();
  });
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(res, -ECANCELED);
  EXPECT_GE(done - start, 10ms);
  // The pipe is still usable: the cancelled read consumed nothing.
  ASSERT_EQ(::write(p.w, "z", 1), 1);
  int later = 0;
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) { later = r; });
  loop.run();
  EXPECT_EQ(later, 1);
  EXPECT_EQ(buf[0], 'z');
}

TEST_P(timeout, read_with_timeout_on_a_bad_fd_is_ebadf) {
  event_loop loop(opts());
  char buf[8];
  int res = 1;
  loop.read_with_timeout(1'000'000, buf, sizeof buf, 0, 1h, [&](int r) { res = r; });
  watchdog dog(5s, "a failed read left its linked timeout running");
  loop.run();
  EXPECT_EQ(res, -EBADF);
}

TEST_P(timeout, read_with_timeout_can_be_cancelled) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  int res = 1;
  int cres = 1;
  auto h = loop.read_with_timeout(p.r, buf, sizeof buf, 0, 1h, [&](int r) { res = r; });
  loop.run_once(false);
  loop.cancel(h, [&](int r) { cres = r; });
  watchdog dog(5s, "cancelling a read_with_timeout did not complete it");
  loop.run();
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(res, -ECANCELED);
}

// A NOP first puts every read at the last free slot of the 4-deep SQ, so each linked
// timeout finds the SQ full: the ring must move the read and its timeout into the next
// submission together (a split link leaves the read with no deadline: it would hang).
TEST_P(timeout, read_with_timeout_when_the_link_meets_a_full_sq) {
  event_loop loop(opts(4));
  ASSERT_EQ(loop.sq_entries(), 4u);
  pipe_fds p;
  constexpr int n = 41;
  std::vector<int> results(n, 1);
  auto bufs = std::make_unique<char[]>(n);
  int nop_res = 1;
  loop.nop([&](int r) { nop_res = r; });
  for (int i = 0; i < n; ++i)
    loop.read_with_timeout(p.r, &bufs[static_cast<std::size_t>(i)], 1, 0, 20ms,
                           [&results, i](int r) { results[static_cast<std::size_t>(i)] = r; });
  watchdog dog(10s, "a read whose linked timeout met a full SQ never completed (split link?)");
  loop.run();
  EXPECT_EQ(nop_res, 0);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(results[static_cast<std::size_t>(i)], -ECANCELED) << "read " << i;
}

TEST_P(timeout, read_with_timeout_when_the_link_meets_a_full_sq_data_first) {
  event_loop loop(opts(4));
  pipe_fds p;
  ASSERT_EQ(::write(p.w, "abcdefgh", 8), 8);
  constexpr int n = 8;
  std::vector<int> results(n, 1);
  char bufs[n];
  loop.nop([](int) {});
  for (int i = 0; i < n; ++i)
    loop.read_with_timeout(p.r, &bufs[i], 1, 0, 1h, [&results, i](int r) { results[static_cast<std::size_t>(i)] = r; });
  watchdog dog(10s, "reads with data and a 1 h linked timeout never completed");
  loop.run();
  std::string got;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(results[static_cast<std::size_t>(i)], 1) << "read " << i;
    got += bufs[i];
  }
  EXPECT_EQ(got, "abcdefgh");  // SQEs are issued in order; each read takes the next byte
}

INSTANTIATE_TEST_SUITE_P(modes, timeout, ::testing::Bool(), mode_name);

}  // namespace
