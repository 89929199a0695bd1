// A connection's receive buffer: bytes [start, end) of `cap` are unparsed input; the
// current request always begins at start (the parser keeps offsets from there). It grows
// by doubling up to a bound (the parser's limits fail a request before the bound is hit).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

namespace saturn::http::detail {

class conn_buffer {
 public:
  conn_buffer(std::size_t initial, std::size_t max) : m_cap(initial), m_max(max), m_buf(new char[initial]) {}

  char* data() noexcept { return m_buf.get() + m_start; }
  std::size_t size() const noexcept { return m_end - m_start; }
  bool empty() const noexcept { return m_start == m_end; }
  /// Drops `n` parsed bytes from the front.
  void consume(std::size_t n) noexcept {
    m_start += n;
    if (m_start == m_end)
      m_start = m_end = 0;
  }
  /// Room for at least `n` more bytes (compacting first, then growing); false past the bound.
  bool reserve(std::size_t n) {
    if (m_cap - m_end >= n)
      return true;
    if (m_start > 0) {
      std::memmove(m_buf.get(), m_buf.get() + m_start, m_end - m_start);
      m_end -= m_start;
      m_start = 0;
      if (m_cap - m_end >= n)
        return true;
    }
    std::size_t need = m_end + n;
    if (need > m_max + n)
      return false;
    std::size_t ncap = std::max(m_cap * 2, need);
    std::unique_ptr<char[]> nbuf(new char[ncap]);
    std::memcpy(nbuf.get(), m_buf.get(), m_end);
    m_buf = std::move(nbuf);
    m_cap = ncap;
    return true;
  }
  /// Moves the data to the front and makes room for `n` more bytes after it, so that the
  /// next reads need no compaction or growth (a streamed body keeps its head in place);
  /// false past the bound.
  bool pin(std::size_t n) {
    if (m_start > 0) {
      std::memmove(m_buf.get(), m_buf.get() + m_start, m_end - m_start);
      m_end -= m_start;
      m_start = 0;
    }
    if (m_cap - m_end >= n)
      return true;
    // Exactly what is asked (not doubled): the window is the bound a streamed body keeps.
    std::size_t need = m_end + n;
    if (need > m_max + n)
      return false;
    std::unique_ptr<char[]> nbuf(new char[need]);
    std::memcpy(nbuf.get(), m_buf.get(), m_end);
    m_buf = std::move(nbuf);
    m_cap = need;
    return true;
  }
  /// True if `n` more bytes fit after the data without moving it.
  bool fits(std::size_t n) const noexcept { return m_cap - m_end >= n; }
  /// Keeps the first `n` bytes of the data (n <= size()).
  void truncate(std::size_t n) noexcept { m_end = m_start + n; }
  /// The free space after the data (for a recv into the buffer); reserve() first.
  std::span<std::byte> free_space() noexcept {
    return {reinterpret_cast<std::byte*>(m_buf.get() + m_end), m_cap - m_end};
  }
  /// Bytes a recv wrote into free_space().
  void commit(std::size_t n) noexcept { m_end += n; }
  /// Copies `bytes` in after the data; false past the bound.
  bool append(std::span<const std::byte> bytes) {
    if (!reserve(bytes.size()))
      return false;
    std::memcpy(m_buf.get() + m_end, bytes.data(), bytes.size());
    m_end += bytes.size();
    return true;
  }

 private:
  std::size_t m_start = 0, m_end = 0, m_cap, m_max;
  std::unique_ptr<char[]> m_buf;
};

}  // namespace saturn::http::detail
