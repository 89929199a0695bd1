// Loop timers (no kernel object per timer): after/cancel_after and add_timer/cancel_timer
// fire in deadline order, never before their deadline, and never once cancelled. A
// randomized arm/cancel/run sequence is checked against an oracle (the set of armed ids).
#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::clock;
using saturn::event_loop;
using saturn::run_mode;
using saturn::timer_node;

/// A user-owned timer that records when it fired.
struct probe_timer : timer_node {
  int id = 0;
  int fires = 0;
  int discards = 0;
  clock::time_point fired_at{};
  std::vector<int>* order = nullptr;
  probe_timer() {
    m_fire = [](timer_node* self, run_mode mode) noexcept {
      auto* t = static_cast<probe_timer*>(self);
      if (mode == run_mode::discard) {
        ++t->discards;
        return;
      }
      ++t->fires;
      t->fired_at = clock::now();
      if (t->order != nullptr)
        t->order->push_back(t->id);
    };
  }
};

TEST(timer, after_fires_once_not_before_its_deadline) {
  event_loop loop;
  int calls = 0;
  clock::time_point fired{};
  const auto start = clock::now();
  loop.after(15ms, [&] {
    ++calls;
    fired = clock::now();
  });
  EXPECT_EQ(loop.timer_count(), 1u);
  EXPECT_TRUE(loop.has_work());
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_GE(fired - start, 15ms);
  EXPECT_LT(fired - start, 1s);
  EXPECT_EQ(loop.timer_count(), 0u);
}

// fire_due_timers (what a thread_pool worker calls every few tasks): fires what is due,
// leaves the rest armed, and enters no ring.
TEST(timer, fire_due_timers_fires_only_what_is_due) {
  event_loop loop;
  int due = 0, later = 0;
  loop.after(0ms, [&] { ++due; });
  loop.after(1h, [&] { ++later; });
  loop.fire_due_timers();
  EXPECT_EQ(due, 1);
  EXPECT_EQ(later, 0);
  loop.fire_due_timers();
  EXPECT_EQ(due, 1) << "a timer fired twice";
  EXPECT_EQ(loop.timer_count(), 1u);
  EXPECT_EQ(loop.stats().enters, 0u) << "fire_due_timers entered the ring";
}

TEST(timer, a_lone_timer_sleeps_in_the_kernel_instead_of_spinning) {
  event_loop loop(saturn::loop_options{.timer_spin = 0ns});
  bool fired = false;
  loop.after(30ms, [&] { fired = true; });
  loop.run();
  EXPECT_TRUE(fired);
  EXPECT_LT(loop.stats().enters, 10u) << "the loop spun instead of waiting for the deadline";
}

// timer_spin: the loop sleeps until that long before the deadline, then polls. With the
// default (50 µs) a 30 ms timer costs a few dozen polls, not 30 ms of them; with 3 ms the
// polls of the last stretch show, and the timer still never fires early.
TEST(timer, timer_spin_polls_only_the_last_stretch_before_a_deadline) {
  {
    event_loop loop;
    loop.after(30ms, [] {});
    loop.run();
    EXPECT_LT(loop.stats().enters, 2000u) << "the loop polled far more than the last 50 us";
  }
  event_loop loop(saturn::loop_options{.timer_spin = 3ms});
  clock::time_point fired{};
  const auto start = clock::now();
  loop.after(30ms, [&] { fired = clock::now(); });
  loop.run();
  EXPECT_GE(fired - start, 30ms);
  EXPECT_GT(loop.stats().enters, 20u) << "the loop slept through the last 3 ms instead of polling";
}

// A timer callback that queues work the loop cannot see (as the thread pool does when a
// fired sleep wakes its task) calls stay_awake(): the same run_once must then return
// instead of blocking in the ring, here on a pipe read that nothing completes for 2 s.
TEST(timer, stay_awake_from_a_timer_keeps_that_turn_from_blocking) {
  event_loop loop;
  pipe_fds p;
  char buf[1];
  bool read_done = false;
  loop.read(p.r, buf, 1, static_cast<std::uint64_t>(-1), [&](int) { read_done = true; });
  bool fired = false;
  loop.after(0ms, [&] {
    fired = true;
    loop.stay_awake();
  });
  std::thread unblock([&] {
    std::this_thread::sleep_for(2s);
    EXPECT_EQ(::write(p.w, "x", 1), 1);
  });
  const auto t0 = clock::now();
  loop.run_once(true);
  const auto took = clock::now() - t0;
  EXPECT_TRUE(fired);
  EXPECT_LT(took, 1s) << "run_once blocked although a callback asked it to stay awake";
  unblock.join();
  while (!read_done)
    loop.run_once(true);
}

TEST(timer, custom_nodes_fire_in_deadline_order_never_early) {
  event_loop loop;
  constexpr int n = 64;
  std::vector<probe_timer> timers(n);
  std::vector<int> order;
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> us(0, 20'000);
  const auto base = clock::now();
  for (int i = 0; i < n; ++i) {
    auto& t = timers[static_cast<std::size_t>(i)];
    t.id = i;
    t.order = &order;
    loop.add_timer(&t, base + std::chrono::microseconds(us(rng)));
    EXPECT_TRUE(t.armed());
  }
  EXPECT_EQ(loop.timer_count(), static_cast<std::size_t>(n));
  loop.run();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  for (std::size_t k = 1; k < order.size(); ++k)
    EXPECT_LE(timers[static_cast<std::size_t>(order[k - 1])].m_deadline,
              timers[static_cast<std::size_t>(order[k])].m_deadline)
        << "fired out of deadline order at position " << k;
  for (const auto& t : timers) {
    EXPECT_EQ(t.fires, 1);
    EXPECT_FALSE(t.armed());
    EXPECT_GE(t.fired_at, t.m_deadline) << "timer " << t.id << " fired before its deadline";
  }
}

TEST(timer, after_timers_fire_in_deadline_order) {
  event_loop loop;
  std::vector<int> order;
  std::vector<clock::time_point> earliest(20);
  std::vector<clock::time_point> fired(20);
  for (int i = 19; i >= 0; --i) {
    const auto d = std::chrono::milliseconds(i);
    earliest[static_cast<std::size_t>(i)] = clock::now() + d;
    loop.after(d, [&, i] {
      order.push_back(i);
      fired[static_cast<std::size_t>(i)] = clock::now();
    });
  }
  loop.run();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
    EXPECT_GE(fired[static_cast<std::size_t>(i)], earliest[static_cast<std::size_t>(i)]);
  }
}

TEST(timer, cancel_after_before_fire_never_fires_and_frees_the_callable) {
  event_loop loop;
  auto token = std::make_shared<int>(0);
  bool fired = false;
  auto t = loop.after(5ms, [&fired, token] { fired = true; });
  EXPECT_EQ(token.use_count(), 2);
  EXPECT_TRUE(loop.cancel_after(t));
  EXPECT_EQ(token.use_count(), 1) << "cancel_after must destroy the callable";
  EXPECT_EQ(loop.timer_count(), 0u);
  bool other = false;
  loop.after(10ms, [&] { other = true; });
  loop.run();
  EXPECT_FALSE(fired);
  EXPECT_TRUE(other);
}

TEST(timer, cancel_timer_before_fire_never_fires) {
  event_loop loop;
  probe_timer a;
  probe_timer b;
  loop.add_timer(&a, clock::now() + 5ms);
  loop.add_timer(&b, clock::now() + 10ms);
  EXPECT_TRUE(loop.cancel_timer(&a));
  EXPECT_FALSE(a.armed());
  EXPECT_FALSE(loop.cancel_timer(&a)) << "a second cancel finds nothing";
  loop.run();
  EXPECT_EQ(a.fires, 0);
  EXPECT_EQ(a.discards, 0) << "cancel_timer hands a custom node back without calling it";
  EXPECT_EQ(b.fires, 1);
  EXPECT_FALSE(loop.cancel_timer(&b)) << "already fired";
}

TEST(timer, never_armed_cancel_is_false) {
  event_loop loop;
  probe_timer a;
  EXPECT_FALSE(loop.cancel_timer(&a));
}

TEST(timer, a_due_timer_cancelled_by_an_earlier_one_never_fires) {
  event_loop loop;
  probe_timer victim;
  bool killer_ran = false;
  const auto now = clock::now();
  struct killer_node : timer_node {
    event_loop* loop;
    probe_timer* victim;
    bool* ran;
  } killer;
  killer.loop = &loop;
  killer.victim = &victim;
  killer.ran = &killer_ran;
  killer.m_fire = [](timer_node* self, run_mode mode) noexcept {
    auto* k = static_cast<killer_node*>(self);
    if (mode == run_mode::run) {
      *k->ran = true;
      EXPECT_TRUE(k->loop->cancel_timer(k->victim));
    }
  };
  loop.add_timer(&killer, now - 2ms);  // both already due; the killer is earlier
  loop.add_timer(&victim, now - 1ms);
  loop.run();
  EXPECT_TRUE(killer_ran);
  EXPECT_EQ(victim.fires, 0);
}

TEST(timer, a_timer_may_rearm_itself) {
  event_loop loop;
  struct periodic : timer_node {
    event_loop* loop = nullptr;
    int left = 5;
    std::vector<clock::time_point> deadlines, fired;
  } p;
  p.loop = &loop;
  p.m_fire = [](timer_node* self, run_mode mode) noexcept {
    auto* t = static_cast<periodic*>(self);
    if (mode != run_mode::run)
      return;
    t->deadlines.push_back(t->m_deadline);
    t->fired.push_back(clock::now());
    if (--t->left > 0)
      t->loop->add_timer(t, t->m_deadline + 2ms);
  };
  loop.add_timer(&p, clock::now() + 2ms);
  loop.run();
  ASSERT_EQ(p.fired.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_GE(p.fired[i], p.deadlines[i]);
}

TEST(timer, a_timer_rearming_with_zero_delay_does_not_starve_io) {
  event_loop loop;
  int ticks = 0;
  bool nop_done = false;
  bool stop = false;
  struct ticker {
    event_loop* loop;
    int* ticks;
    bool* stop;
    void operator()() const {
      ++*ticks;
      if (!*stop)
        loop->after(0ns, *this);
    }
  };
  loop.after(0ns, ticker{&loop, &ticks, &stop});
  loop.nop([&](int) {
    nop_done = true;
    stop = true;
  });
  watchdog dog(5s, "a zero-delay timer chain starved a NOP completion");
  loop.run();
  EXPECT_TRUE(nop_done);
}

TEST(timer, negative_delay_fires_on_the_next_iteration) {
  event_loop loop;
  bool fired = false;
  loop.after(-5ms, [&] { fired = true; });
  loop.run_once(false);
  EXPECT_TRUE(fired);
}

TEST(timer, cancel_after_of_itself_inside_its_callback_is_false) {
  event_loop loop;
  event_loop::timer_handle self{};
  int result = -1;
  int calls = 0;
  self = loop.after(1ms, [&] {
    ++calls;
    result = loop.cancel_after(self) ? 1 : 0;  // the storage is still alive during the call
  });
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result, 0);
}

// Randomized: arm / cancel / run_once steps against an oracle that knows which ids are
// armed. After every run_once, each timer due before the iteration began has fired, and
// every fire was of an armed timer, at or after its deadline.
TEST(timer, randomized_arm_cancel_against_oracle) {
  event_loop loop;
  constexpr int n = 48;
  std::vector<probe_timer> timers(n);
  for (int i = 0; i < n; ++i)
    timers[static_cast<std::size_t>(i)].id = i;
  std::set<int> armed;  // the oracle
  std::vector<int> fired_now;
  for (auto& t : timers)
    t.order = &fired_now;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_int_distribution<int> action(0, 9);
  std::uniform_int_distribution<int> delay_us(-500, 3000);
  int total_fired = 0;
  int total_cancelled = 0;
  for (int step = 0; step < 6000; ++step) {
    const int a = action(rng);
    probe_timer& t = timers[static_cast<std::size_t>(pick(rng))];
    if (a < 4) {
      if (armed.count(t.id) == 0) {
        loop.add_timer(&t, clock::now() + std::chrono::microseconds(delay_us(rng)));
        armed.insert(t.id);
      }
    } else if (a < 7) {
      const bool expect = armed.erase(t.id) == 1;
      ASSERT_EQ(loop.cancel_timer(&t), expect) << "step " << step;
      total_cancelled += expect;
    } else {
      const auto before = clock::now();
      fired_now.clear();
      loop.run_once(false);
      for (int id : fired_now) {
        const probe_timer& f = timers[static_cast<std::size_t>(id)];
        ASSERT_EQ(armed.erase(id), 1u) << "step " << step << ": timer " << id << " fired while not armed";
        ASSERT_GE(f.fired_at, f.m_deadline) << "step " << step << ": timer " << id << " fired early";
      }
      for (std::size_t k = 1; k < fired_now.size(); ++k)
        ASSERT_LE(timers[static_cast<std::size_t>(fired_now[k - 1])].m_deadline,
                  timers[static_cast<std::size_t>(fired_now[k])].m_deadline);
      for (int id : armed)
        ASSERT_GT(timers[static_cast<std::size_t>(id)].m_deadline, before)
            << "step " << step << ": timer " << id << " was due but did not fire";
      total_fired += static_cast<int>(fired_now.size());
    }
    ASSERT_EQ(loop.timer_count(), armed.size()) << "step " << step;
    for (const auto& x : timers)
      ASSERT_EQ(x.armed(), armed.count(x.id) == 1) << "step " << step << " timer " << x.id;
  }
  // Drain: everything still armed fires.
  fired_now.clear();
  loop.run();
  for (int id : fired_now)
    EXPECT_EQ(armed.erase(id), 1u);
  EXPECT_TRUE(armed.empty());
  total_fired += static_cast<int>(fired_now.size());
  EXPECT_GT(total_fired, 100);
  EXPECT_GT(total_cancelled, 100);
  for (const auto& x : timers)
    EXPECT_EQ(x.discards, 0);
}

// Randomized after()/cancel_after(): only timers the oracle says have not fired are
// cancelled; each callable runs at most once, and exactly once unless cancelled.
TEST(timer, randomized_after_cancel_after_against_oracle) {
  event_loop loop;
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> action(0, 9);
  std::uniform_int_distribution<int> delay_us(0, 2000);
  struct entry {
    event_loop::timer_handle node{};
    int fires = 0;
    bool cancelled = false;
    clock::time_point earliest{};
    clock::time_point fired_at{};
  };
  std::vector<std::unique_ptr<entry>> all;
  std::vector<entry*> pending;  // armed per the oracle
  for (int step = 0; step < 4000; ++step) {
    const int a = action(rng);
    if (a < 5) {
      auto e = std::make_unique<entry>();
      const auto d = std::chrono::microseconds(delay_us(rng));
      e->earliest = clock::now() + d;
      entry* raw = e.get();
      e->node = loop.after(d, [raw] {
        ++raw->fires;
        raw->fired_at = clock::now();
      });
      pending.push_back(raw);
      all.push_back(std::move(e));
    } else if (a < 7) {
      // Refresh the oracle: drop the ones that fired.
      std::erase_if(pending, [](entry* e) { return e->fires != 0; });
      if (pending.empty())
        continue;
      std::uniform_int_distribution<std::size_t> pick(0, pending.size() - 1);
      const std::size_t i = pick(rng);
      entry* e = pending[i];
      ASSERT_TRUE(loop.cancel_after(e->node)) << "step " << step;
      e->cancelled = true;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      loop.run_once(false);
    }
  }
  loop.run();
  int cancelled = 0;
  for (const auto& e : all) {
    if (e->cancelled) {
      ++cancelled;
      EXPECT_EQ(e->fires, 0);
    } else {
      EXPECT_EQ(e->fires, 1);
      EXPECT_GE(e->fired_at, e->earliest);
    }
  }
  EXPECT_GT(cancelled, 50);
}

// cancel_after(): "Disarms and frees a timer returned by after(); false if it already
// fired." But a fired timer's storage goes back to the loop's pool at once, so the next
// after() gets the same address and a late cancel_after() of the old handle disarms the
// new, unrelated timer.
TEST(timer, cancel_after_of_a_fired_timer_returns_false_and_touches_no_other_timer) {
  event_loop loop;
  bool first = false;
  auto old_handle = loop.after(0ns, [&] { first = true; });
  loop.run();
  ASSERT_TRUE(first);
  bool second = false;
  auto new_handle = loop.after(5ms, [&] { second = true; });
  const char* aba = new_handle.node == old_handle.node ? " (the new timer reuses the fired one's storage)" : "";
  EXPECT_FALSE(loop.cancel_after(old_handle)) << "the old timer already fired" << aba;
  EXPECT_EQ(loop.timer_count(), 1u) << "the new timer was disarmed through the old handle" << aba;
  loop.run();
  EXPECT_TRUE(second);
}

}  // namespace
