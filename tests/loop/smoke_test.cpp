#include <gtest/gtest.h>
#include <saturn/loop/event_loop.hpp>

TEST(event_loop, nop_completes_with_zero) {
  saturn::event_loop loop;
  int got = -1;
  loop.nop([&](int res) { got = res; });
  loop.run();
  EXPECT_EQ(got, 0);
}
