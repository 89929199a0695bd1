// The one cancellation protocol (loop/detail/cancel_core.hpp) that tier B's awaits and
// tier C's leaves share, on both homes of its stop_callback (inline and boxed). A fake
// operation "completes" after a number of loop turns (a runnable that posts itself
// again), so every path can be driven on purpose; then a randomized race of stops from
// another thread against completions checks that every operation finishes exactly once
// and is never touched after it finished: each one frees itself when it finishes, so a
// late touch is a use-after-free for AddressSanitizer, and TSan sees the races.
#include <saturn/loop/detail/cancel_core.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <stop_token>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using saturn::event_loop;
using saturn::run_mode;
using saturn::runnable;

/// What the operations did, written on the loop thread only.
struct tally {
  std::vector<int> finished;  // per operation id
  int total = 0, cancels = 0, after_posts = 0;
  explicit tally(int n) : finished(static_cast<std::size_t>(n), 0) {}
};

/// Box for the boxed home: plain operator new, counted (every allocation is freed).
struct counting_box {
  static inline std::atomic<int> live{0};
  static void* allocate(std::size_t n) {
    live.fetch_add(1, std::memory_order_relaxed);
    return ::operator new(n);
  }
  static void deallocate(void* p, std::size_t) noexcept {
    live.fetch_sub(1, std::memory_order_relaxed);
    ::operator delete(p);
  }
};

/// A heap-allocated fake operation. `turns` loop turns after start() it completes (a
/// CQE), unless `manual`: then the test calls complete() itself. A cancel makes the next
/// turn complete it (as ASYNC_CANCEL brings the final CQE). It deletes itself when it
/// finishes.
template <class Box>
class fake_op : public saturn::detail::cancel_core<fake_op<Box>, Box> {
  using core = saturn::detail::cancel_core<fake_op<Box>, Box>;
  friend core;

 public:
  fake_op(tally& t, int id, int turns, bool manual) : m_tally(t), m_id(id), m_turns(turns), m_manual(manual) {}

  /// Loop thread: starts the operation, then arms it (the order the real ones use). A
  /// stop already requested cancels it inside arm(). `stop_on_turn` >= 0 requests a stop
  /// of `src` from the loop thread at that turn.
  void start(event_loop& loop, std::stop_source* src, int stop_on_turn) {
    m_loop = &loop;
    m_src = src;
    m_stop_on_turn = stop_on_turn;
    if (!m_manual) {
      m_step.m_fn = &step;
      m_step.self = this;
      loop.post(&m_step);
    }
    const std::stop_token tok = src ? src->get_token() : std::stop_token{};
    this->arm(&loop, src ? &tok : nullptr);
  }

  /// Loop thread: the operation's completion (finishes it unless a cross-thread request
  /// is in flight; then that request's runnable finishes it).
  void complete() {
    if (this->complete_may_proceed())
      finish();
  }

 private:
  struct step_node : runnable {
    fake_op* self = nullptr;
  };

  static void step(runnable* r, run_mode mode) noexcept {
    fake_op* self = static_cast<step_node*>(r)->self;
    if (mode == run_mode::discard)
      return;
    if (self->m_turn++ == self->m_stop_on_turn)
      self->m_src->request_stop();  // on the loop thread: cancels at once, or nothing
    if (self->m_turns > 0) {
      --self->m_turns;
      self->m_loop->post(r);
      return;
    }
    self->complete();
  }

  void core_cancel() noexcept {
    ++m_tally.cancels;
    m_turns = 0;
  }
  void core_after_post() noexcept {
    ++m_tally.after_posts;
    finish();
  }
  void finish() noexcept {
    this->disarm();
    ++m_tally.finished[static_cast<std::size_t>(m_id)];
    ++m_tally.total;
    delete this;
  }

  tally& m_tally;
  int m_id;
  int m_turns;
  bool m_manual;
  int m_turn = 0;
  int m_stop_on_turn = -1;
  event_loop* m_loop = nullptr;
  std::stop_source* m_src = nullptr;
  step_node m_step;
};

/// Runs the loop until `t` counts `n` finished operations (bounded: a lost finish fails).
void run_until(event_loop& loop, const tally& t, int n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (t.total < n) {
    loop.run_once(false);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << t.total << " of " << n << " finished";
  }
}

/// One operation on one loop, and the checks every single-path test ends with.
template <class Box>
class CancelCore : public ::testing::Test {
 protected:
  /// Starts an operation that completes after `turns` loop turns (manual: when the test
  /// calls complete()), under `src`'s token when `with_token`.
  fake_op<Box>* start(int turns, bool manual, bool with_token = true, int stop_on_turn = -1) {
    auto* op = new fake_op<Box>(t, 0, turns, manual);
    op->start(loop, with_token ? &src : nullptr, stop_on_turn);
    return op;
  }
  void stop_from_another_thread() {
    std::thread([this] { src.request_stop(); }).join();
  }
  /// Runs the loop until the operation finished, and checks it finished exactly once
  /// along the expected path.
  void expect_finished_once(int cancels, int after_posts) {
    run_until(loop, t, 1);
    EXPECT_EQ(t.finished[0], 1);
    EXPECT_EQ(t.total, 1);
    EXPECT_EQ(t.cancels, cancels);
    EXPECT_EQ(t.after_posts, after_posts);
  }

  event_loop loop;
  tally t{1};
  std::stop_source src;
};
using homes = ::testing::Types<void, counting_box>;
class home_names {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_void_v<T> ? "inline" : "boxed";
  }
};
TYPED_TEST_SUITE(CancelCore, homes, home_names);

TYPED_TEST(CancelCore, CompletesWithoutAStopToken) {
  this->start(2, false, false);
  this->expect_finished_once(0, 0);
}

TYPED_TEST(CancelCore, StopRequestedBeforeArmCancelsInsideArm) {
  this->src.request_stop();
  this->start(1000, false);
  EXPECT_EQ(this->t.cancels, 1);  // stop_while_arming, acted on before arm() returned
  this->expect_finished_once(1, 0);
}

TYPED_TEST(CancelCore, StopOnTheLoopThreadCancelsAtOnce) {
  this->start(1000, false, true, 3);
  this->expect_finished_once(1, 0);  // would take 1000 turns without the cancel
}

TYPED_TEST(CancelCore, StopFromAnotherThreadIsPostedToTheLoop) {
  this->start(1'000'000, false);
  this->stop_from_another_thread();
  EXPECT_EQ(this->t.cancels, 0);  // posted, not yet run
  this->expect_finished_once(1, 0);
}

TYPED_TEST(CancelCore, CompletionWhileARequestTravelsLetsTheRequestFinish) {
  auto* op = this->start(0, true);
  this->stop_from_another_thread();  // state posted, its runnable queued
  op->complete();                    // the CQE first: must not finish
  EXPECT_EQ(this->t.total, 0);
  this->expect_finished_once(0, 1);  // the request's runnable finishes it, exactly once
}

TYPED_TEST(CancelCore, StopAfterCompletionDoesNothing) {
  this->start(0, true)->complete();
  EXPECT_EQ(this->t.finished[0], 1);
  this->src.request_stop();  // the callback was dropped by disarm(): nothing runs
  this->stop_from_another_thread();
  this->loop.run_once(false);
  this->expect_finished_once(0, 0);
}

/// The race: 64 operations per round, each with a random completion time and one of: no
/// stop, a stop before it starts, a stop on the loop thread at a random turn, or a stop
/// from another thread after a random spin (landing before, during or after arm(), while
/// it runs, or after it completed). Every operation must finish exactly once; no boxed
/// callback may leak.
TYPED_TEST(CancelCore, RandomStopsRaceCompletionsAndEachFinishesOnce) {
  constexpr int k_ops = 64;
  constexpr int k_rounds = 300;
  std::mt19937 rng(20261205);
  int cancels = 0, after_posts = 0, cross = 0;
  for (int round = 0; round < k_rounds; ++round) {
    tally rt(k_ops);
    std::vector<std::stop_source> sources(k_ops);
    std::vector<int> kind(k_ops), turns(k_ops), spin(k_ops);
    std::vector<int> remote;  // ids stopped from the other thread, in its order
    for (int i = 0; i < k_ops; ++i) {
      kind[i] = static_cast<int>(rng() % 4);
      turns[i] = static_cast<int>(rng() % 6);
      spin[i] = static_cast<int>(rng() % 3000);
      if (kind[i] == 3)
        remote.push_back(i);
    }
    std::shuffle(remote.begin(), remote.end(), rng);
    cross += static_cast<int>(remote.size());
    std::atomic<bool> go{false};
    std::thread stopper([&] {
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      for (int id : remote) {
        for (int s = 0; s < spin[static_cast<std::size_t>(id)]; ++s)
          std::atomic_signal_fence(std::memory_order_seq_cst);  // a spin the compiler keeps
        sources[static_cast<std::size_t>(id)].request_stop();
      }
    });
    go.store(true, std::memory_order_release);
    for (int i = 0; i < k_ops; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (kind[u] == 1)
        sources[u].request_stop();
      const int stop_on_turn = kind[u] == 2 ? static_cast<int>(rng() % 4) : -1;
      (new fake_op<TypeParam>(rt, i, turns[u], false))
          ->start(this->loop, kind[u] == 0 ? nullptr : &sources[u], stop_on_turn);
    }
    run_until(this->loop, rt, k_ops);
    stopper.join();
    this->loop.run_once(false);  // nothing may be left to run: an extra finish would count
    for (int i = 0; i < k_ops; ++i)
      ASSERT_EQ(rt.finished[static_cast<std::size_t>(i)], 1) << "round " << round << ", operation " << i;
    ASSERT_EQ(rt.total, k_ops);
    cancels += rt.cancels;
    after_posts += rt.after_posts;
  }
  if constexpr (!std::is_void_v<TypeParam>) {
    EXPECT_EQ(counting_box::live.load(), 0);
  }
  EXPECT_GT(cancels, 0);
  EXPECT_GT(cross, 0);
  ::testing::Test::RecordProperty("cancels", cancels);
  ::testing::Test::RecordProperty("after_posts", after_posts);
}

}  // namespace
