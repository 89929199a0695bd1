// detail::timer_heap (the loop's 4-ary deadline heap) against a std::multiset oracle:
// randomized push / pop / erase sequences with many equal deadlines.
#include <saturn/loop/detail/timer_heap.hpp>

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

namespace {

using saturn::clock;
using saturn::timer_node;
using saturn::detail::timer_heap;

struct node : timer_node {
  int id = 0;
};

clock::time_point at(int ticks) { return clock::time_point(std::chrono::nanoseconds(ticks)); }

TEST(timer_heap, empty) {
  timer_heap h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.size(), 0u);
  node n;
  EXPECT_FALSE(h.erase(&n));
}

TEST(timer_heap, pops_in_deadline_order) {
  timer_heap h;
  std::vector<node> nodes(1000);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(0, 100);  // many ties
  for (auto& n : nodes) {
    n.m_deadline = at(d(rng));
    h.push(&n);
    EXPECT_TRUE(n.armed());
  }
  EXPECT_EQ(h.size(), nodes.size());
  clock::time_point last = at(-1);
  while (!h.empty()) {
    timer_node* t = h.pop();
    EXPECT_FALSE(t->armed());
    EXPECT_LE(last, t->m_deadline);
    last = t->m_deadline;
  }
}

TEST(timer_heap, erase_the_only_node_and_the_last_node) {
  timer_heap h;
  node a;
  a.m_deadline = at(5);
  h.push(&a);
  EXPECT_TRUE(h.erase(&a));
  EXPECT_TRUE(h.empty());
  EXPECT_FALSE(a.armed());
  node b;
  node c;
  b.m_deadline = at(1);
  c.m_deadline = at(2);
  h.push(&b);
  h.push(&c);
  EXPECT_TRUE(h.erase(&c));  // the last slot
  EXPECT_EQ(h.top(), &b);
  EXPECT_EQ(h.size(), 1u);
}

// Erasing from the middle moves the last node into the hole; when that node is earlier
// than the hole's parent it must sift up, not down.
TEST(timer_heap, erase_in_the_middle_sifts_the_moved_node_up) {
  timer_heap h;
  // Root 0; children 10,20,30,40; grandchildren under child 40 (indices 17..20) late;
  // the last node (added last) is early (1) and lands in another subtree's hole.
  std::vector<node> nodes(25);
  const int deadlines[25] = {0,  10, 20, 30, 40, 11, 12, 13, 14, 21, 22, 23, 24,
                             31, 32, 33, 34, 41, 42, 43, 44, 15, 16, 17, 1};
  for (int i = 0; i < 25; ++i) {
    nodes[static_cast<std::size_t>(i)].m_deadline = at(deadlines[i]);
    nodes[static_cast<std::size_t>(i)].id = i;
    h.push(&nodes[static_cast<std::size_t>(i)]);
  }
  // Erase a deep node in the subtree of 40: the last node (1) moves under 40's subtree.
  ASSERT_TRUE(h.erase(&nodes[20]));
  std::multiset<int> oracle(deadlines, deadlines + 25);
  oracle.erase(oracle.find(44));
  while (!h.empty()) {
    auto* t = static_cast<node*>(h.pop());
    ASSERT_EQ(t->m_deadline, at(*oracle.begin()));
    oracle.erase(oracle.begin());
  }
  EXPECT_TRUE(oracle.empty());
}

TEST(timer_heap, randomized_against_multiset) {
  for (unsigned seed : {1u, 2u, 3u, 42u, 1234u}) {
    SCOPED_TRACE(seed);
    timer_heap h;
    constexpr int n = 300;
    std::vector<node> nodes(n);
    for (int i = 0; i < n; ++i)
      nodes[static_cast<std::size_t>(i)].id = i;
    std::multiset<std::pair<clock::time_point, int>> oracle;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, n - 1);
    std::uniform_int_distribution<int> action(0, 9);
    std::uniform_int_distribution<int> deadline(0, 50);
    for (int step = 0; step < 20000; ++step) {
      node& x = nodes[static_cast<std::size_t>(pick(rng))];
      const int a = action(rng);
      if (a < 5) {
        if (!x.armed()) {
          x.m_deadline = at(deadline(rng));
          h.push(&x);
          oracle.emplace(x.m_deadline, x.id);
        }
      } else if (a < 8) {
        const bool was = x.armed();
        ASSERT_EQ(h.erase(&x), was);
        if (was) {
          ASSERT_EQ(oracle.erase({x.m_deadline, x.id}), 1u);
        }
      } else if (!h.empty()) {
        ASSERT_EQ(h.top()->m_deadline, oracle.begin()->first) << "step " << step;
        auto* t = static_cast<node*>(h.pop());
        ASSERT_EQ(t->m_deadline, oracle.begin()->first);
        ASSERT_EQ(oracle.erase({t->m_deadline, t->id}), 1u) << "popped a node the oracle does not hold";
      }
      ASSERT_EQ(h.size(), oracle.size());
      ASSERT_EQ(h.empty(), oracle.empty());
      if (!h.empty()) {
        ASSERT_EQ(h.top()->m_deadline, oracle.begin()->first) << "step " << step;
      }
    }
    for (const auto& x : nodes)
      ASSERT_EQ(x.armed(), oracle.count({x.m_deadline, x.id}) == 1);
  }
}

}  // namespace
