// A connection's receive buffer: bytes [start, end) of `cap` are unparsed input; the
// current request always begins at start (the parser keeps offsets from there). It grows
// by doubling up to a bound (the parser's limits fail a request before the bound is hit).
//
// Memory of idle connections: the buffer is taken only when bytes arrive and given back
// (release()) while the connection waits empty for its next request on a multishot
// receive, which needs no buffer of the connection's own. A connection then holds no
// receive buffer while it is idle, so thousands of idle keep-alive connections cost a few
// KiB each, not the buffer size. Given-back buffers of the initial size go to a small
// per-thread cache (a stack of at most k_cache_max), so a busy keep-alive connection
// that releases and retakes one per request pays two pointer moves, not malloc + free,
// and the cache holds only what the thread's concurrently active connections need.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

namespace saturn::http::detail {

/// A per-thread stack of receive buffers of one size (the first size taken on the thread,
/// a connection's initial size; buffers that grew past it are freed, not cached). Owner
/// thread only.
class conn_buffer_cache {
 public:
  static constexpr std::size_t k_cache_max = 64;

  ~conn_buffer_cache() {
    for (std::size_t i = 0; i < m_count; ++i)
      delete[] m_free[i];
  }
  /// The calling thread's cache.
  static conn_buffer_cache& local() noexcept {
    thread_local conn_buffer_cache c;
    return c;
  }
  /// A buffer of `size` bytes (from the cache when it holds that size).
  std::unique_ptr<char[]> take(std::size_t size) {
    if (m_size == 0)
      m_size = size;  // the size connections start with; a grown buffer given back is freed
    if (size == m_size && m_count > 0)
      return std::unique_ptr<char[]>(m_free[--m_count]);
    return std::unique_ptr<char[]>(new char[size]);
  }
  /// Gives back a buffer of `size` bytes (kept if the cache has room for that size).
  void give(std::unique_ptr<char[]> buf, std::size_t size) noexcept {
    if (size == m_size && m_count < k_cache_max)
      m_free[m_count++] = buf.release();
  }

 private:
  char* m_free[k_cache_max] = {};
  std::size_t m_count = 0;
  std::size_t m_size = 0;  // the one size cached (0: none yet)
};

class conn_buffer {
 public:
  /// No memory is taken yet: the first reserve() or append() takes `initial` bytes.
  conn_buffer(std::size_t initial, std::size_t max) : m_cap(0), m_initial(initial), m_max(max) {}
  ~conn_buffer() = default;  // frees its memory (not into the cache: that is for a live connection)
  conn_buffer(const conn_buffer&) = delete;
  conn_buffer& operator=(const conn_buffer&) = delete;

  /// Gives the memory back while the buffer is empty (a no-op otherwise); the next
  /// reserve() takes a buffer of the initial size again.
  void release() noexcept {
    if (!m_buf || m_start != m_end)
      return;
    conn_buffer_cache::local().give(std::move(m_buf), m_cap);
    m_start = m_end = m_cap = 0;
  }
  /// True while the buffer holds memory (for tests).
  bool holds_memory() const noexcept { return m_buf != nullptr; }

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
    if (!m_buf && n <= m_initial) {
      m_buf = conn_buffer_cache::local().take(m_initial);
      m_cap = m_initial;
      return true;
    }
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
    std::size_t ncap = std::max({m_cap * 2, m_initial, need});
    std::unique_ptr<char[]> nbuf(new char[ncap]);
    if (m_end > 0)
      std::memcpy(nbuf.get(), m_buf.get(), m_end);
    m_buf = std::move(nbuf);
    m_cap = ncap;
    return true;
  }
  /// Moves the data to the front and makes the buffer hold at least `keep + n` bytes, so
  /// that the first `keep` bytes (a streamed body's head, which must stay in place) have
  /// `n` bytes of window behind them; false past the bound. Data already buffered after
  /// `keep` (body bytes that came in with the head) counts against the window, so a
  /// connection's buffer stays at most the largest head plus one window however many
  /// bodies it streams: were the room measured after the data instead, each body would
  /// grow the buffer by what the previous one left it to read in with the next head.
  bool pin(std::size_t keep, std::size_t n) {
    if (m_start > 0) {
      std::memmove(m_buf.get(), m_buf.get() + m_start, m_end - m_start);
      m_end -= m_start;
      m_start = 0;
    }
    const std::size_t want = std::max(m_end, keep + n);  // m_end > keep + n: a larger buffer before
    if (m_cap >= want)
      return true;
    // Exactly what is asked (not doubled): the window is the bound a streamed body keeps.
    if (want > m_max + n)
      return false;
    std::unique_ptr<char[]> nbuf(new char[want]);
    if (m_end > 0)
      std::memcpy(nbuf.get(), m_buf.get(), m_end);
    m_buf = std::move(nbuf);
    m_cap = want;
    return true;
  }
  /// Bytes the buffer can hold in all (for tests).
  std::size_t capacity() const noexcept { return m_cap; }
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
  std::size_t m_start = 0, m_end = 0, m_cap, m_initial, m_max;
  std::unique_ptr<char[]> m_buf;
};

}  // namespace saturn::http::detail
