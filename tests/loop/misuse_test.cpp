// Misuse must fail loudly, never silently: driving a loop from a thread that does not own
// it, linking a timeout to nothing. And a configuration that must not hang: a 1-entry SQ
// with a linked timeout (a link needs both SQEs in one submission).
#include <saturn/ext/submit.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::kernel_timespec;
using saturn::loop_options;

class misuse : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(misuse, run_on_a_thread_that_does_not_own_the_loop_throws) {
  pipe_fds p;
  char buf[4];
  int res = 1;
  event_loop loop;
  if (!loop.defer_taskrun())
    GTEST_SKIP() << "the ring is not SINGLE_ISSUER|DEFER_TASKRUN here, so a foreign submitter is not detected";
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) { res = r; });
  bool threw = false;
  std::string what;
  std::thread foreign([&] {
    try {
      loop.run();
    } catch (const std::system_error& e) {
      threw = true;
      what = e.what();
    }
  });
  foreign.join();
  EXPECT_TRUE(threw) << "a loop driven from a foreign thread must throw, not run";
  EXPECT_EQ(res, 1) << "the read must not have completed through the foreign thread";
  // The owner can still tear it down: the read completes, cancelled.
  ::testing::Test::RecordProperty("foreign_run_error", what);
}

TEST_F(misuse, link_timeout_with_nothing_before_it_dies) {
  EXPECT_DEATH(
      {
        event_loop loop;
        const kernel_timespec ts = kernel_timespec::from(1ms);
        saturn::ext::link_timeout(loop, &ts);
        loop.run();
      },
      "");
}

// loop_options{.entries = 1} is accepted (the kernel gives a 1-deep SQ), but a read and
// its linked timeout must go to the kernel in one submission: with one SQE slot the
// link can never be formed. It must not hang (an error or a larger SQ would do).
TEST_F(misuse, one_entry_sq_with_a_linked_timeout_does_not_hang) {
  EXPECT_EXIT(
      {
        ::alarm(3);  // a hang becomes SIGALRM: "killed by signal 14"
        pipe_fds p;
        if (::write(p.w, "ok", 2) != 2)
          std::_Exit(2);
        char buf[4];
        int res = 1;
        event_loop loop(loop_options{.entries = 1});
        try {
          loop.read_with_timeout(p.r, buf, sizeof buf, 0, 1s, [&](int r) { res = r; });
          loop.run();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "threw: %s\n", e.what());
          std::_Exit(0);  // a diagnosed error is acceptable
        }
        std::_Exit(res == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
