// NOP through both tiers, the loop's bookkeeping (in_flight, has_work, stats, run_once)
// and the ready queue (defer ordering), in both ring modes.
#include <saturn/ext/submit.hpp>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class nop : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

TEST_P(nop, callback_gets_zero_once) {
  event_loop loop(opts());
  int calls = 0;
  int got = -1;
  loop.nop([&](int res) {
    ++calls;
    got = res;
  });
  EXPECT_EQ(loop.in_flight(), 1u);
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(got, 0);
  EXPECT_EQ(loop.in_flight(), 0u);
  EXPECT_FALSE(loop.has_work());
}

TEST_P(nop, callback_may_take_flags) {
  event_loop loop(opts());
  int got = -1;
  unsigned flags = 12345;
  loop.nop([&](int res, unsigned f) {
    got = res;
    flags = f;
  });
  loop.run();
  EXPECT_EQ(got, 0);
  EXPECT_EQ(flags, 0u);  // no IORING_CQE_F_MORE on a one-shot NOP
}

TEST_P(nop, raw_operation_completes_once) {
  event_loop loop(opts());
  raw_op op;
  saturn::ext::submit_nop(loop, &op);
  loop.run();
  EXPECT_EQ(op.calls, 1);
  EXPECT_EQ(op.res, 0);
}

TEST_P(nop, stats_count_completions) {
  event_loop loop(opts());
  constexpr int n = 100;
  int calls = 0;
  for (int i = 0; i < n; ++i)
    loop.nop([&](int) { ++calls; });
  loop.run();
  EXPECT_EQ(calls, n);
  EXPECT_EQ(loop.stats().completions, static_cast<std::uint64_t>(n));
  EXPECT_GE(loop.stats().enters, 1u);
}

TEST_P(nop, fresh_loop_has_no_work_and_run_returns) {
  event_loop loop(opts());
  EXPECT_FALSE(loop.has_work());
  EXPECT_EQ(event_loop::current(), &loop);
  loop.run();  // must return at once
  EXPECT_FALSE(loop.run_once(true));
}

TEST_P(nop, sq_entries_reports_depth) {
  event_loop loop(loop_options{.entries = 64, .defer_taskrun = GetParam()});
  EXPECT_EQ(loop.sq_entries(), 64u);
  event_loop rounded(loop_options{.entries = 100, .defer_taskrun = GetParam()});
  EXPECT_EQ(rounded.sq_entries(), 128u);  // the kernel rounds up to a power of two
  EXPECT_GE(loop.ring_fd(), 0);
}

TEST_P(nop, run_once_nonblocking_returns_with_work_pending) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[4];
  int got = 1;
  loop.read(p.r, buf, sizeof buf, 0, [&](int res) { got = res; });
  watchdog dog(5s, "run_once(false) blocked");
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(loop.run_once(false));  // a read on an empty pipe: never blocks
  EXPECT_EQ(got, 1);
  ASSERT_EQ(::write(p.w, "x", 1), 1);
  loop.run();
  EXPECT_EQ(got, 1);  // one byte read
}

TEST_P(nop, defer_runs_fifo) {
  event_loop loop(opts());
  std::vector<int> order;
  for (int i = 0; i < 1000; ++i)
    loop.defer([&order, i] { order.push_back(i); });
  EXPECT_TRUE(loop.has_work());
  loop.run();
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST_P(nop, raw_post_runs_runnable) {
  event_loop loop(opts());
  struct counted : saturn::runnable {
    int runs = 0;
    int discards = 0;
    counted() {
      m_fn = [](saturn::runnable* self, saturn::run_mode mode) noexcept {
        auto* c = static_cast<counted*>(self);
        if (mode == saturn::run_mode::run)
          ++c->runs;
        else
          ++c->discards;
      };
    }
  } r;
  loop.post(&r);
  loop.run();
  EXPECT_EQ(r.runs, 1);
  EXPECT_EQ(r.discards, 0);
}

// event_loop.hpp: "run the runnables that were ready when the iteration began (later
// posts wait for the next iteration, so I/O completions are never starved)", and defer():
// "Calls fn() on the loop thread in a later iteration".
TEST_P(nop, defer_from_a_deferred_callback_runs_in_a_later_iteration) {
  event_loop loop(opts());
  int iteration = 0;
  int outer = -1;
  int inner = -1;
  loop.defer([&] {
    outer = iteration;
    loop.defer([&] { inner = iteration; });
  });
  while (loop.run_once(false))
    ++iteration;
  ASSERT_GE(outer, 0);
  ASSERT_GE(inner, 0);
  EXPECT_GT(inner, outer) << "a runnable posted while the ready queue runs ran in the same iteration";
}

// The same contract seen from I/O: a callback that keeps re-deferring itself must not
// delay a completion that is already in the CQ by hundreds of runs.
TEST_P(nop, self_reposting_defer_does_not_delay_a_completion) {
  event_loop loop(opts());
  bool nop_done = false;
  int runs_before_nop = 0;
  struct spinner {
    event_loop* loop;
    bool* stop;
    int* runs;
    void operator()() const {
      if (*stop)
        return;
      ++*runs;
      loop->defer(*this);
    }
  };
  loop.nop([&](int) { nop_done = true; });
  loop.run_once(false);  // submits the NOP; its CQE is reaped in this iteration
  ASSERT_TRUE(nop_done);
  bool second = false;
  loop.defer(spinner{&loop, &second, &runs_before_nop});
  loop.nop([&](int) { second = true; });
  while (loop.run_once(false)) {
  }
  EXPECT_TRUE(second);
  // One iteration runs what was ready when it began (1 spinner), then reaps the NOP.
  EXPECT_LE(runs_before_nop, 2) << "the ready queue ran " << runs_before_nop << " re-posted callbacks before a CQE";
}

INSTANTIATE_TEST_SUITE_P(modes, nop, ::testing::Bool(), mode_name);

}  // namespace
