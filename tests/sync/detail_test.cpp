// The sync internals: spin_lock under contention, waiter_list against a std::list
// oracle, ring_buffer against a std::deque oracle (randomized action sequences).
#include <saturn/sync/detail/ring_buffer.hpp>
#include <saturn/sync/detail/spin_lock.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using saturn::detail::ring_buffer;
using saturn::detail::spin_lock;
using saturn::detail::waiter;
using saturn::detail::waiter_list;

TEST(sync_spin_lock, guards_a_plain_counter_across_threads) {
  spin_lock lock;
  long counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard<spin_lock> g(lock);
        ++counter;
      }
    });
  for (auto& t : ts)
    t.join();
  EXPECT_EQ(counter, 4 * 20000);
  EXPECT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
}

TEST(sync_waiter_list, randomized_against_a_list_oracle) {
  std::mt19937 rng(7);
  spin_lock lock;
  std::vector<std::unique_ptr<waiter>> pool;
  for (int i = 0; i < 64; ++i)
    pool.push_back(std::make_unique<waiter>());
  std::list<waiter*> model;
  {
    waiter_list list(lock);
    std::lock_guard<spin_lock> g(lock);
    for (int step = 0; step < 20000; ++step) {
      const unsigned action = rng() % 3;
      waiter* w = pool[rng() % pool.size()].get();
      if (action == 0 && !w->m_linked) {
        list.push_back(w);
        model.push_back(w);
      } else if (action == 1 && !model.empty()) {
        ASSERT_EQ(list.pop_front(), model.front());
        model.pop_front();
      } else if (action == 2 && w->m_linked) {
        list.erase(w);
        model.remove(w);
      }
      ASSERT_EQ(list.empty(), model.empty());
      if (!model.empty()) {
        ASSERT_EQ(list.front(), model.front());
      }
      for (auto& p : pool)
        ASSERT_EQ(p->m_linked, std::find(model.begin(), model.end(), p.get()) != model.end());
    }
    // Walk the links both ways against the model.
    std::vector<waiter*> fwd;
    for (waiter* w = list.front(); w != nullptr; w = w->m_next)
      fwd.push_back(w);
    ASSERT_EQ(fwd, std::vector<waiter*>(model.begin(), model.end()));
    if (!fwd.empty()) {
      std::vector<waiter*> back;
      for (waiter* w = fwd.back(); w != nullptr; w = w->m_prev)
        back.push_back(w);
      std::reverse(back.begin(), back.end());
      ASSERT_EQ(back, fwd);
    }
    // A waiter popped or erased keeps m_list until its task resumes (unpark); in real use
    // it is always notified first, so ~waiter leaves the list alone. Emulate that here.
    for (auto& p : pool)
      if (!p->m_linked)
        p->m_list = nullptr;
  }  // lock released, then ~waiter_list detaches whatever is still linked
  for (auto& p : pool) {
    EXPECT_FALSE(p->m_linked);
    EXPECT_EQ(p->m_list, nullptr);
  }
}

TEST(sync_ring_buffer, randomized_against_a_deque_oracle) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 50; ++trial) {
    ring_buffer<std::unique_ptr<int>> rb;
    std::deque<int> model;
    int next = 0;
    for (int step = 0; step < 5000; ++step) {
      // Bias growth then shrinkage so the head wraps around at many capacities.
      const bool push = model.empty() || rng() % 100 < (step % 1000 < 500 ? 70u : 30u);
      if (push) {
        auto v = std::make_unique<int>(next);
        rb.push_back(std::move(v));
        EXPECT_FALSE(v);
        model.push_back(next++);
      } else {
        ASSERT_EQ(*rb.front(), model.front());
        auto v = rb.pop_front();
        ASSERT_EQ(*v, model.front());
        model.pop_front();
      }
      ASSERT_EQ(rb.size(), model.size());
      ASSERT_GE(rb.capacity(), rb.size());
    }
  }  // leftovers are destroyed by ~ring_buffer (ASan checks for leaks)
}
