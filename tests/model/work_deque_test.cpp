// The Chase-Lev deque (src/sched/work_deque.hpp, the real header, compiled against the
// instrumented atomics): the owner's pop and push racing steal_half_into and steal. Every
// schedule within the preemption bound must take each item exactly once; two mutants of
// the header (tests/model/CMakeLists.txt) must each be caught.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "checker.hpp"
#include "mutants/work_deque_no_restore.hpp"
#include "mutants/work_deque_plain_pop.hpp"
#include "sched/work_deque.hpp"

namespace {

using namespace saturn;

struct item {
  int id = 0;
};

constexpr int k_items = 8;  // item ids; a scenario uses the first few

/// What the threads took. Plain ints: one model thread runs at a time, and the baton's
/// hand-off orders their accesses.
struct tally {
  item items[k_items];
  int taken[k_items] = {};
  tally() {
    for (int i = 0; i < k_items; ++i)
      items[i].id = i;
  }
  void take(item* x) { ++taken[x->id]; }
  /// Items [0, n) were each taken exactly once.
  void check_exactly_once(int n) const {
    for (int i = 0; i < n; ++i) {
      model::check(taken[i] <= 1, "an item was taken twice");
      model::check(taken[i] >= 1, "an item was lost");
    }
  }
};

void print(const char* name, const model::report& r) {
  std::printf("%s: %zu executions, up to %zu scheduling points each, %s\n", name, r.executions, r.max_depth,
              r.ok ? (r.complete ? "bound explored" : "INCOMPLETE") : r.failure.c_str());
  if (!r.ok)
    std::printf("the failing schedule, thread by thread:\n%s\n", r.schedule.c_str());
}

/// The owner pops `initial` items while a thief runs steal_half_into (and then empties
/// its own deque); the owner then pushes one more item and pops again, which needs a
/// correct bottom after a pop that lost the last item to the thief. `mark_odd` pushes
/// the odd items with steal_alone (a join's forks), which shortens the thief's claim.
template <template <class, std::size_t, std::size_t> class Deque>
model::report pop_vs_steal_half(int initial, int bound, std::uint32_t first_index = 0, bool mark_odd = false) {
  using deque = Deque<item, 8, 2>;
  model::options opt;
  opt.preemption_bound = bound;
  return model::explore(opt, [&](model::execution& ex) {
    struct state {
      tally t;
      deque victim;
      deque thief_own;
      bool pushed = false;
      explicit state(std::uint32_t first) : victim(first), thief_own(first) {}
    };
    auto st = std::make_shared<state>(first_index);
    for (int i = 0; i < initial; ++i)  // setup: not a model thread, no points
      (void)st->victim.push(&st->t.items[i], mark_odd && i % 2 == 1);
    ex.spawn([st, initial] {
      while (item* x = st->victim.pop())
        st->t.take(x);
      st->pushed = st->victim.push(&st->t.items[initial]);
      while (item* x = st->victim.pop())
        st->t.take(x);
    });
    ex.spawn([st] {
      if (item* x = st->victim.steal_half_into(st->thief_own))
        st->t.take(x);
      while (item* x = st->thief_own.pop())
        st->t.take(x);
    });
    if (!ex.run())
      return;
    st->t.check_exactly_once(initial);
    model::check(st->pushed, "push failed on a deque that is not full");
    st->t.check_exactly_once(initial + 1);
  });
}

/// Three threads: the owner pushes and pops while one thief runs steal_half_into and
/// another steal().
template <template <class, std::size_t, std::size_t> class Deque>
model::report push_pop_vs_two_thieves(int bound) {
  using deque = Deque<item, 8, 2>;
  model::options opt;
  opt.preemption_bound = bound;
  return model::explore(opt, [&](model::execution& ex) {
    struct state {
      tally t;
      deque victim;
      deque thief_own;
    };
    auto st = std::make_shared<state>();
    for (int i = 0; i < 3; ++i)
      (void)st->victim.push(&st->t.items[i]);
    ex.spawn([st] {
      if (item* x = st->victim.pop())
        st->t.take(x);
      model::check(st->victim.push(&st->t.items[3]), "push failed on a deque that is not full");
      while (item* x = st->victim.pop())
        st->t.take(x);
    });
    ex.spawn([st] {
      if (item* x = st->victim.steal_half_into(st->thief_own))
        st->t.take(x);
      while (item* x = st->thief_own.pop())
        st->t.take(x);
    });
    ex.spawn([st] {
      if (item* x = st->victim.steal())
        st->t.take(x);
    });
    if (!ex.run())
      return;
    st->t.check_exactly_once(4);
  });
}

/// A chain: the owner pops while thief A moves half of its deque into A's own deque, which
/// A pops while thief B steals from it (the moved items are published there as pushes).
template <template <class, std::size_t, std::size_t> class Deque>
model::report steal_half_chain(int bound) {
  using deque = Deque<item, 8, 2>;
  model::options opt;
  opt.preemption_bound = bound;
  return model::explore(opt, [&](model::execution& ex) {
    struct state {
      tally t;
      deque victim;
      deque a_own;
    };
    auto st = std::make_shared<state>();
    for (int i = 0; i < 4; ++i)
      (void)st->victim.push(&st->t.items[i]);
    ex.spawn([st] {
      while (item* x = st->victim.pop())
        st->t.take(x);
    });
    ex.spawn([st] {
      if (item* x = st->victim.steal_half_into(st->a_own))
        st->t.take(x);
      while (item* x = st->a_own.pop())
        st->t.take(x);
    });
    ex.spawn([st] {
      if (item* x = st->a_own.steal())
        st->t.take(x);
    });
    if (!ex.run())
      return;
    st->t.check_exactly_once(4);
  });
}

TEST(ModelWorkDeque, PopVsStealHalfIntoBound3) {
  for (int initial : {1, 2, 3, 4}) {  // 4: two far-path pops, then two near-path ones (K = 2)
    const auto r = pop_vs_steal_half<sched::work_deque>(initial, 3);
    print(("pop vs steal_half_into, " + std::to_string(initial) + " items").c_str(), r);
    EXPECT_TRUE(r.ok) << initial << " items: " << r.failure << "\n" << r.schedule;
    EXPECT_TRUE(r.complete) << initial << " items";
  }
}

TEST(ModelWorkDeque, PopVsStealHalfIntoWithMarkedItemsBound3) {
  for (int initial : {2, 3, 4}) {  // claims cut short before (or taking alone) a marked item
    const auto r = pop_vs_steal_half<sched::work_deque>(initial, 3, 0, /*mark_odd=*/true);
    print(("pop vs steal_half_into, marked items, " + std::to_string(initial) + " items").c_str(), r);
    EXPECT_TRUE(r.ok) << initial << " items: " << r.failure << "\n" << r.schedule;
    EXPECT_TRUE(r.complete) << initial << " items";
  }
}

TEST(ModelWorkDeque, PopVsStealHalfIntoAcrossIndexWrap) {
  // Indices start 2 below 2^32, so the items straddle the wrap of the 32-bit index.
  const auto r = pop_vs_steal_half<sched::work_deque>(4, 3, 0xffff'fffeu);
  print("pop vs steal_half_into across the index wrap", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelWorkDeque, PushPopVsTwoThievesBound2) {
  const auto r = push_pop_vs_two_thieves<sched::work_deque>(2);
  print("push/pop vs steal_half_into and steal", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelWorkDeque, StealHalfIntoChainBound2) {
  const auto r = steal_half_chain<sched::work_deque>(2);
  print("pop vs steal_half_into vs steal from the thief", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelWorkDequeMutant, PlainChaseLevPopIsCaught) {
  // The owner takes slot b with no RMW while a thief holds a stale claim of two items.
  const auto r = pop_vs_steal_half<sched::mutant_plain_pop::work_deque>(4, 2);
  print("mutant plain_pop", r);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure, "an item was taken twice") << r.schedule;
}

TEST(ModelWorkDequeMutant, MissingRestoreIsCaught) {
  const auto r = pop_vs_steal_half<sched::mutant_no_restore::work_deque>(2, 2);
  print("mutant no_restore", r);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure, "push failed on a deque that is not full") << r.schedule;
}

}  // namespace
