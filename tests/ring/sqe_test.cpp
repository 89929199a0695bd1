// ring::uring under pressure: more SQEs than the SQ holds without submitting (get_sqe
// flushes, never returns null), CQ overflow (the kernel keeps what does not fit; reaping
// pulls it in, nothing lost or repeated), linked SQEs that meet a full SQ, and enter().
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ring/ring.hpp"

namespace {

using saturn::ring::setup_options;
using saturn::ring::uring;

struct pipe_fds {
  int r = -1;
  int w = -1;
  pipe_fds() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  ~pipe_fds() {
    ::close(r);
    ::close(w);
  }
};

/// Reaps until `expected` CQEs were seen (pulling in CQ overflow), recording user_data.
std::vector<std::uint64_t> reap_all(uring& r, std::size_t expected) {
  std::vector<std::uint64_t> seen;
  for (int spins = 0; seen.size() < expected && spins < 100000; ++spins) {
    r.reap([&](std::uint64_t ud, int, unsigned) { seen.push_back(ud); });
    if (seen.size() >= expected)
      break;
    if (r.cq_overflowed())
      r.submit_and_get_events();
    else
      r.enter(1, 100'000'000);
  }
  return seen;
}

class sqe : public ::testing::TestWithParam<bool> {
 protected:
  setup_options opts(unsigned entries, unsigned cq = 0) const {
    return setup_options{.entries = entries, .cq_entries = cq, .defer_taskrun = GetParam()};
  }
};

TEST_P(sqe, more_sqes_than_the_sq_holds_never_returns_null) {
  uring r(opts(8));
  ASSERT_EQ(r.sq_entries(), 8u);
  constexpr std::uint64_t n = 80;  // 10x the depth, no explicit submit in between
  for (std::uint64_t i = 0; i < n; ++i) {
    io_uring_sqe* s = r.get_sqe();
    ASSERT_NE(s, nullptr) << "sqe " << i;
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, 1000 + i);
    EXPECT_LE(r.pending(), r.sq_entries());
  }
  ASSERT_GE(r.enter(0, 0), 0);
  const auto seen = reap_all(r, n);
  ASSERT_EQ(seen.size(), n);
  for (std::uint64_t i = 0; i < n; ++i)
    EXPECT_EQ(seen[i], 1000 + i) << "NOPs complete in submission order";
  EXPECT_FALSE(r.has_completions());
}

TEST_P(sqe, cq_overflow_loses_and_repeats_nothing) {
  uring r(opts(4, 8));
  ASSERT_EQ(r.cq_entries(), 8u);
  if (!r.feature_set().nodrop)
    GTEST_SKIP() << "no IORING_FEAT_NODROP: the kernel drops CQEs on overflow";
  constexpr std::uint64_t n = 100;
  for (std::uint64_t i = 0; i < n; ++i) {
    io_uring_sqe* s = r.get_sqe();
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, i + 1);
  }
  ASSERT_GE(r.enter(0, 0), 0);
  EXPECT_TRUE(r.cq_overflowed()) << "100 CQEs into an 8-entry CQ must overflow";
  const auto seen = reap_all(r, n);
  ASSERT_EQ(seen.size(), n);
  std::vector<int> count(n + 1, 0);
  for (auto ud : seen)
    ++count[ud];
  for (std::uint64_t i = 1; i <= n; ++i)
    EXPECT_EQ(count[i], 1) << "user_data " << i;
  EXPECT_FALSE(r.cq_overflowed());
}

TEST_P(sqe, submitting_while_reaping) {
  // Each CQE's handler prepares two more NOPs while the reap loop is running, so the
  // 4-deep SQ is flushed from inside reap() with CQEs still unconsumed.
  uring r(opts(4, 8));
  constexpr std::uint64_t n = 5000;
  std::uint64_t next = 0;
  std::vector<int> count(n, 0);
  auto submit = [&] {
    io_uring_sqe* s = r.get_sqe();
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, ++next);
  };
  for (int i = 0; i < 4; ++i)
    submit();
  std::uint64_t done = 0;
  for (int spins = 0; done < n && spins < 1'000'000; ++spins) {
    r.enter(0, 0);
    r.reap([&](std::uint64_t ud, int res, unsigned) {
      EXPECT_EQ(res, 0);
      ASSERT_GE(ud, 1u);
      ASSERT_LE(ud, n);
      ++count[ud - 1];
      ++done;
      for (int k = 0; k < 2 && next < n; ++k)
        submit();
    });
    if (r.cq_overflowed())
      r.submit_and_get_events();
  }
  EXPECT_EQ(done, n);
  for (std::uint64_t i = 0; i < n; ++i)
    ASSERT_EQ(count[i], 1) << "user_data " << i + 1;
}

// A read at the last free slot, then a linked timeout: get_linked_sqe must carry the
// read over into the next submission together with its timeout.
TEST_P(sqe, linked_sqe_when_the_sq_is_full) {
  uring r(opts(4));
  pipe_fds p;
  char buf[4];
  for (std::uint64_t i = 0; i < 3; ++i) {
    io_uring_sqe* s = r.get_sqe();
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, 50 + i);
  }
  io_uring_sqe* rd = r.get_sqe();
  io_uring_prep_read(rd, p.r, buf, sizeof buf, 0);
  io_uring_sqe_set_data64(rd, 1);
  ASSERT_EQ(r.pending(), 4u);
  __kernel_timespec ts{0, 5'000'000};
  io_uring_sqe* lt = r.get_linked_sqe();
  io_uring_prep_link_timeout(lt, &ts, 0);
  io_uring_sqe_set_data64(lt, 2);
  ASSERT_GE(r.enter(0, 0), 0);
  int read_res = 1;
  int timeout_res = 1;
  int nops = 0;
  for (int spins = 0; (read_res == 1 || timeout_res == 1) && spins < 100; ++spins) {
    r.enter(1, 1'000'000'000);
    r.reap([&](std::uint64_t ud, int res, unsigned) {
      if (ud == 1)
        read_res = res;
      else if (ud == 2)
        timeout_res = res;
      else
        ++nops;
    });
  }
  EXPECT_EQ(nops, 3);
  EXPECT_EQ(read_res, -ECANCELED) << "the read was not linked to its timeout";
  EXPECT_EQ(timeout_res, -ETIME);
}

// With a 1-deep SQ a link can never be formed (both SQEs must go in one submission).
// get_linked_sqe must not spin forever waiting for two free slots.
[[noreturn]] void link_on_one_entry_sq(bool defer) {
  ::alarm(3);  // a hang becomes "killed by signal 14"
  try {
    uring r(setup_options{.entries = 1, .defer_taskrun = defer});
    if (r.sq_entries() != 1)
      std::_Exit(0);
    pipe_fds p;
    char buf[4];
    io_uring_prep_read(r.get_sqe(), p.r, buf, sizeof buf, 0);
    __kernel_timespec ts{0, 1'000'000};
    io_uring_prep_link_timeout(r.get_linked_sqe(), &ts, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "threw: %s\n", e.what());
  }
  std::_Exit(0);  // returning or throwing are both fine; hanging is not
}

TEST_P(sqe, linked_sqe_on_a_one_entry_sq_does_not_hang) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(link_on_one_entry_sq(GetParam()), ::testing::ExitedWithCode(0), "");
}

TEST_P(sqe, enter_with_a_timeout_and_nothing_to_wait_for) {
  uring r(opts(4));
  const auto start = std::chrono::steady_clock::now();
  const int res = r.enter(1, 5'000'000);
  EXPECT_EQ(res, -ETIME);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4));
  EXPECT_FALSE(r.has_completions());
  const int idle = r.enter(0, 0);
  EXPECT_TRUE(idle == 0 || idle == -EAGAIN) << "nothing pending: nothing submitted, got " << idle;
}

TEST_P(sqe, pending_and_has_completions) {
  uring r(opts(8));
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_FALSE(r.has_completions());
  io_uring_prep_nop(r.get_sqe());
  io_uring_prep_nop(r.get_sqe());
  EXPECT_EQ(r.pending(), 2u);
  EXPECT_EQ(r.enter(1, -1), 2);
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_TRUE(r.has_completions());
  EXPECT_EQ(r.reap([](std::uint64_t, int, unsigned) {}), 2u);
  EXPECT_FALSE(r.has_completions());
}

INSTANTIATE_TEST_SUITE_P(modes, sqe, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "defer_taskrun" : "coop_taskrun"; });

}  // namespace
