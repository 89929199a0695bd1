// sim::minimize_faults: a failing seed's fault schedule shortened to what the failure needs.
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

namespace sim = saturn::sim;
using saturn::testing::op_kind;

namespace {

// Fails when any of its NOPs fails; does no reads, sends or accepts.
saturn::task<void> fragile(sim::world&) {
  for (int i = 0; i < 40; ++i) {
    auto r = co_await saturn::nop();
    if (!r)
      throw std::runtime_error("a NOP failed: " + r.err().message());
  }
}

TEST(SimMinimize, KeepsOnlyTheFaultTheFailureNeeds) {
  sim::options o;
  o.faults = {{op_kind::read, EIO, 0.5}, {op_kind::send, 0, 0.5}, {op_kind::nop, EIO, 0.4}, {op_kind::accept, EMFILE, 0.5}};
  std::uint64_t seed = 1;
  while (sim::run(seed, o, fragile).ok)
    ++seed;  // with p = 0.4 over 40 NOPs nearly every seed fails; find one
  ASSERT_LT(seed, 10u);
  sim::options m = sim::minimize_faults(seed, o, fragile);
  ASSERT_EQ(m.faults.size(), 1u);
  EXPECT_EQ(m.faults[0].kind, op_kind::nop);
  EXPECT_LE(m.faults[0].probability, 0.4);
  EXPECT_FALSE(sim::run(seed, m, fragile).ok) << "the minimized schedule must still fail the seed";
  sim::options none;
  EXPECT_TRUE(sim::run(seed, none, fragile).ok) << "without faults the program passes";
}

}  // namespace
