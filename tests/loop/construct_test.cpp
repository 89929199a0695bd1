// event_loop construction: options reach the ring, and a failure to set up (no file
// descriptors left) throws std::system_error naming the cause and the fix, leaking
// nothing.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

TEST(construct, defer_taskrun_is_used_when_available) {
  event_loop loop;
  if (!loop.defer_taskrun())
    GTEST_SKIP() << "the kernel refused IORING_SETUP_DEFER_TASKRUN (needs Linux >= 6.1)";
  EXPECT_TRUE(loop.defer_taskrun());
  event_loop coop(loop_options{.defer_taskrun = false});
  EXPECT_FALSE(coop.defer_taskrun());
}

rlimit g_saved_limit{};

/// Lowers RLIMIT_NOFILE so that only `spare` more descriptors can be opened.
bool limit_descriptors(int spare, int* first_free) {
  const int probe = ::dup(0);
  if (probe < 0)
    return false;
  ::close(probe);
  *first_free = probe;  // lowest free descriptor
  ::getrlimit(RLIMIT_NOFILE, &g_saved_limit);
  rlimit rl = g_saved_limit;
  rl.rlim_cur = static_cast<rlim_t>(probe + spare);
  return ::setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/// Restores the limit (first thing in a handler: the sanitizers' runtime needs descriptors).
void restore_descriptors() { ::setrlimit(RLIMIT_NOFILE, &g_saved_limit); }

TEST(construct, no_descriptor_for_the_ring) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int first_free = -1;
        if (!limit_descriptors(0, &first_free))
          std::_Exit(3);
        try {
          event_loop loop;
          std::_Exit(4);
        } catch (const std::system_error& e) {
          restore_descriptors();
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(e.code().value() == EMFILE ? 0 : 5);
        }
      },
      ::testing::ExitedWithCode(0), "RLIMIT_NOFILE");
}

// The ring gets the last descriptor, the loop's eventfd finds none: the error names the
// limit, and the ring is closed again (the descriptor is free afterwards).
TEST(construct, no_descriptor_for_the_wake_eventfd) {
#if defined(SATURN_ASAN)
  GTEST_SKIP() << "UBSan's vptr check opens a pipe for every polymorphic access; with the descriptor limit "
                  "this test needs, it aborts inside the library's throw instead of testing it";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int first_free = -1;
        if (!limit_descriptors(1, &first_free))
          std::_Exit(3);
        try {
          event_loop loop;
          std::_Exit(4);
        } catch (const std::system_error& e) {
          restore_descriptors();
          std::fprintf(stderr, "%s\n", e.what());
          if (e.code().value() != EMFILE)
            std::_Exit(5);
        }
        const int again = ::dup(0);
        std::_Exit(again == first_free ? 0 : 6);  // 6: the ring's descriptor leaked
      },
      ::testing::ExitedWithCode(0), "RLIMIT_NOFILE");
}

}  // namespace
