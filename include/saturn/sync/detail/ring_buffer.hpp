/// \file
/// `ring_buffer<T>`: the queue inside a channel. A power-of-two circular array that grows
/// by doubling and never shrinks, so a channel in steady state allocates nothing.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace saturn::detail {

/// A FIFO of T over one growable circular array.
///
/// Threading: none (the channel's lock guards it). T must be nothrow-move-constructible,
/// so growing gives the strong guarantee: push_back either adds the element or throws
/// std::bad_alloc and changes nothing.
template <class T>
class ring_buffer {
  static_assert(std::is_nothrow_move_constructible_v<T>, "ring_buffer<T> needs a noexcept move constructor");

 public:
  ring_buffer() noexcept = default;
  ring_buffer(const ring_buffer&) = delete;
  ring_buffer& operator=(const ring_buffer&) = delete;
  ~ring_buffer() {
    while (!empty())
      pop_front();
    if (m_data != nullptr)
      std::allocator<T>().deallocate(m_data, m_mask + 1);
  }

  std::size_t size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }
  /// Slots allocated (0 before the first push).
  std::size_t capacity() const noexcept { return m_data != nullptr ? m_mask + 1 : 0; }

  /// The oldest element (the buffer must not be empty).
  T& front() noexcept {
    assert(!empty());
    return m_data[m_head];
  }
  /// Appends `v` (moved from only if this succeeds).
  void push_back(T&& v) {
    if (m_size == capacity())
      grow();
    ::new (static_cast<void*>(m_data + ((m_head + m_size) & m_mask))) T(std::move(v));
    ++m_size;
  }
  /// Removes the oldest element and returns it.
  T pop_front() noexcept {
    assert(!empty());
    T* slot = m_data + m_head;
    T v(std::move(*slot));
    slot->~T();
    m_head = (m_head + 1) & m_mask;
    --m_size;
    return v;
  }

 private:
  void grow() {
    const std::size_t old_cap = capacity();
    const std::size_t new_cap = old_cap == 0 ? 4 : old_cap * 2;
    T* fresh = std::allocator<T>().allocate(new_cap);  // the only throw point
    for (std::size_t i = 0; i < m_size; ++i) {
      T* from = m_data + ((m_head + i) & m_mask);
      ::new (static_cast<void*>(fresh + i)) T(std::move(*from));
      from->~T();
    }
    if (m_data != nullptr)
      std::allocator<T>().deallocate(m_data, old_cap);
    m_data = fresh;
    m_mask = new_cap - 1;
    m_head = 0;
  }

  T* m_data = nullptr;
  std::size_t m_mask = 0;
  std::size_t m_head = 0;
  std::size_t m_size = 0;
};

}  // namespace saturn::detail
