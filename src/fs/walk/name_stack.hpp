// A per-thread stack of subdirectory names for the depth-first part of the walk.
//
// Each directory level pushes the names of its subdirectories (compact records: u16
// length, bytes, NUL) and pops them when it is done, so a walk allocates nothing per
// directory: the buffer grows to the deepest path's needs once and is reused. Records
// are addressed by offset, because growing the buffer moves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace saturn::fs::walk_detail {

class name_stack {
 public:
  name_stack() = default;
  name_stack(const name_stack&) = delete;
  name_stack& operator=(const name_stack&) = delete;
  ~name_stack() { std::free(m_data); }

  /// Makes room for `n` more bytes at top(); returns the (possibly moved) buffer's top.
  std::byte* reserve(std::size_t n) {
    if (m_top + n > m_cap) {
      std::size_t cap = m_cap == 0 ? (std::size_t{256} << 10) : m_cap * 2;
      while (cap < m_top + n)
        cap *= 2;
      void* p = std::realloc(m_data, cap);
      if (p == nullptr)
        throw std::bad_alloc();
      m_data = static_cast<std::byte*>(p);
      m_cap = cap;
    }
    return m_data + m_top;
  }
  std::size_t top() const noexcept { return m_top; }
  void set_top(std::size_t t) noexcept { m_top = t; }
  std::byte* at(std::size_t off) noexcept { return m_data + off; }

  /// Record layout helpers.
  static std::size_t record_size(std::size_t len) noexcept { return 2 + len + 1; }
  static void write_record(std::byte* p, const char* name, std::size_t len) noexcept {
    const auto l = static_cast<std::uint16_t>(len);
    std::memcpy(p, &l, 2);
    // memmove: the record may overlap the dirent it is copied from (it is never ahead of it).
    std::memmove(p + 2, name, len);
    p[2 + len] = std::byte{0};
  }
  static std::size_t record_len(const std::byte* p) noexcept {
    std::uint16_t l;
    std::memcpy(&l, p, 2);
    return l;
  }
  static const char* record_name(const std::byte* p) noexcept { return reinterpret_cast<const char*>(p + 2); }

 private:
  std::byte* m_data = nullptr;
  std::size_t m_cap = 0;
  std::size_t m_top = 0;
};

}  // namespace saturn::fs::walk_detail
