/// \file
/// A 4-ary min-heap of intrusive timer nodes, ordered by deadline. Internal to the loop.
///
/// Why a heap and not one kernel timeout per timer: a kernel timeout costs far more than
/// a heap push and pop, so the loop arms one kernel wait for the nearest deadline
/// (docs/decisions/timers.md has the figures).
/// 4-ary rather than binary: half the depth, and the four children share a cache line.
#pragma once

#include <saturn/loop/runnable.hpp>

#include <cstddef>
#include <vector>

namespace saturn::detail {

/// Threading: single-threaded (the loop's thread).
class timer_heap {
 public:
  bool empty() const noexcept { return m_nodes.empty(); }
  std::size_t size() const noexcept { return m_nodes.size(); }
  timer_node* top() const noexcept { return m_nodes.front(); }

  /// Inserts `n` (which must not be armed). May allocate when the heap grows (amortized;
  /// the vector keeps its capacity, so a steady state allocates nothing).
  void push(timer_node* n) {
    n->m_heap_index = static_cast<std::uint32_t>(m_nodes.size());
    m_nodes.push_back(n);
    sift_up(n->m_heap_index);
  }

  /// Removes and returns the earliest node.
  timer_node* pop() noexcept {
    timer_node* t = m_nodes.front();
    remove_at(0);
    return t;
  }

  /// True when `n` is armed in this heap (safe for a node whose memory was reused).
  bool contains(const timer_node* n) const noexcept {
    const std::uint32_t i = n->m_heap_index;
    return i < m_nodes.size() && m_nodes[i] == n;
  }

  /// Removes `n` if armed; returns whether it was.
  bool erase(timer_node* n) noexcept {
    if (!n->armed())
      return false;
    remove_at(n->m_heap_index);
    return true;
  }

 private:
  static constexpr std::size_t arity = 4;

  void remove_at(std::uint32_t i) noexcept {
    timer_node* gone = m_nodes[i];
    gone->m_heap_index = timer_node::npos;
    timer_node* last = m_nodes.back();
    m_nodes.pop_back();
    if (last == gone)
      return;
    m_nodes[i] = last;
    last->m_heap_index = i;
    if (i > 0 && last->m_deadline < m_nodes[(i - 1) / arity]->m_deadline)
      sift_up(i);
    else
      sift_down(i);
  }

  void sift_up(std::uint32_t i) noexcept {
    timer_node* n = m_nodes[i];
    while (i > 0) {
      std::uint32_t parent = static_cast<std::uint32_t>((i - 1) / arity);
      timer_node* p = m_nodes[parent];
      if (!(n->m_deadline < p->m_deadline))
        break;
      m_nodes[i] = p;
      p->m_heap_index = i;
      i = parent;
    }
    m_nodes[i] = n;
    n->m_heap_index = i;
  }

  void sift_down(std::uint32_t i) noexcept {
    const std::size_t size = m_nodes.size();
    timer_node* n = m_nodes[i];
    for (;;) {
      std::size_t first = i * arity + 1;
      if (first >= size)
        break;
      std::size_t last = first + arity < size ? first + arity : size;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < last; ++c)
        if (m_nodes[c]->m_deadline < m_nodes[best]->m_deadline)
          best = c;
      if (!(m_nodes[best]->m_deadline < n->m_deadline))
        break;
      m_nodes[i] = m_nodes[best];
      m_nodes[i]->m_heap_index = i;
      i = static_cast<std::uint32_t>(best);
    }
    m_nodes[i] = n;
    n->m_heap_index = i;
  }

  std::vector<timer_node*> m_nodes;
};

}  // namespace saturn::detail
