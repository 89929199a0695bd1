// IORING_OP_ASYNC_CANCEL through cancel() and submit_cancel(): an in-flight read is
// cancelled (0 / -ECANCELED), an operation that already completed or was never submitted
// is not found (-ENOENT), and every target completes exactly once either way.
#include <saturn/ext/submit.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class cancel : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

TEST_P(cancel, in_flight_read_on_empty_pipe) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  int rres = 1;
  int rcalls = 0;
  int cres = 1;
  int ccalls = 0;
  auto h = loop.read(p.r, buf, sizeof buf, 0, [&](int r) {
    rres = r;
    ++rcalls;
  });
  loop.run_once(false);  // the read is parked in the kernel
  EXPECT_EQ(rcalls, 0);
  loop.cancel(h, [&](int r) {
    cres = r;
    ++ccalls;
  });
  EXPECT_EQ(loop.in_flight(), 2u);
  watchdog dog(5s, "a cancelled read never completed");
  loop.run();
  EXPECT_EQ(ccalls, 1);
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(rcalls, 1);
  EXPECT_EQ(rres, -ECANCELED);
  EXPECT_EQ(loop.in_flight(), 0u);
  // Nothing was consumed: data written now is read by the next read.
  ASSERT_EQ(::write(p.w, "q", 1), 1);
  int next = 0;
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) { next = r; });
  loop.run();
  EXPECT_EQ(next, 1);
}

TEST_P(cancel, in_flight_read_in_the_same_batch) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  int rres = 1;
  int cres = 1;
  auto h = loop.read(p.r, buf, sizeof buf, 0, [&](int r) { rres = r; });
  loop.cancel(h, [&](int r) { cres = r; });
  watchdog dog(5s, "a cancelled read never completed");
  loop.run();
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(rres, -ECANCELED);
}

TEST_P(cancel, already_completed_in_the_same_batch_is_enoent) {
  event_loop loop(opts());
  int ncalls = 0;
  int nres = 1;
  int cres = 1;
  int ccalls = 0;
  // The NOP completes while its SQE is consumed, before the cancel behind it runs; its
  // callback (and so the handle's storage) is still alive until the batch is reaped.
  auto h = loop.nop([&](int r) {
    nres = r;
    ++ncalls;
  });
  loop.cancel(h, [&](int r) {
    cres = r;
    ++ccalls;
  });
  loop.run();
  EXPECT_EQ(ncalls, 1);
  EXPECT_EQ(nres, 0);
  EXPECT_EQ(ccalls, 1);
  EXPECT_EQ(cres, -ENOENT);
}

TEST_P(cancel, already_completed_raw_operation_is_enoent) {
  event_loop loop(opts());
  pipe_fds p;
  ASSERT_EQ(::write(p.w, "abc", 3), 3);
  char buf[8];
  raw_op target;
  saturn::ext::submit_read(loop, &target, p.r, buf, sizeof buf, 0);
  loop.run();
  ASSERT_EQ(target.calls, 1);
  ASSERT_EQ(target.res, 3);
  raw_op c;
  saturn::ext::submit_cancel(loop, &target, &c);
  loop.run();
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(c.res, -ENOENT);
  EXPECT_EQ(target.calls, 1) << "the original completion must run exactly once";
}

TEST_P(cancel, never_submitted_is_enoent) {
  event_loop loop(opts());
  raw_op ghost;
  raw_op c;
  saturn::ext::submit_cancel(loop, &ghost, &c);
  loop.run();
  EXPECT_EQ(c.res, -ENOENT);
  EXPECT_EQ(ghost.calls, 0);
}

TEST_P(cancel, fire_and_forget_cancel) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  raw_op target;
  saturn::ext::submit_read(loop, &target, p.r, buf, sizeof buf, 0);
  loop.run_once(false);
  saturn::ext::submit_cancel(loop, &target);  // no completion for the cancel itself
  EXPECT_EQ(loop.in_flight(), 1u);
  watchdog dog(5s, "a cancelled read never completed");
  loop.run();
  EXPECT_EQ(target.calls, 1);
  EXPECT_EQ(target.res, -ECANCELED);
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST_P(cancel, from_inside_another_completion) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8];
  int rres = 1;
  int cres = 1;
  auto h = loop.read(p.r, buf, sizeof buf, 0, [&](int r) { rres = r; });
  loop.timeout(2ms, [&](int) { loop.cancel(h, [&](int r) { cres = r; }); });
  watchdog dog(5s, "a cancelled read never completed");
  loop.run();
  EXPECT_EQ(cres, 0);
  EXPECT_EQ(rres, -ECANCELED);
}

// One cancel per read, many reads on the same pipe: each cancel finds exactly its own
// target (user_data is the operation's address).
TEST_P(cancel, each_cancel_hits_only_its_target) {
  event_loop loop(opts());
  pipe_fds p;
  constexpr int n = 50;
  char buf[n];
  std::vector<int> results(n, 1);
  std::vector<event_loop::op_handle> handles;
  for (int i = 0; i < n; ++i)
    handles.push_back(
        loop.read(p.r, &buf[i], 1, 0, [&results, i](int r) { results[static_cast<std::size_t>(i)] = r; }));
  loop.run_once(false);
  int cancelled = 0;
  for (int i = 0; i < n; i += 2)
    loop.cancel(handles[static_cast<std::size_t>(i)], [&](int r) { cancelled += r == 0; });
  loop.run_once(false);
  loop.run_once(false);
  // Feed exactly the odd reads.
  std::string data(n / 2, 'x');
  ASSERT_EQ(::write(p.w, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  watchdog dog(5s, "reads never completed");
  loop.run();
  EXPECT_EQ(cancelled, n / 2);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(results[static_cast<std::size_t>(i)], i % 2 == 0 ? -ECANCELED : 1) << "read " << i;
}

INSTANTIATE_TEST_SUITE_P(modes, cancel, ::testing::Bool(), mode_name);

}  // namespace
