/// \file
/// `buffered_reader<Stream>`: reads lines, delimited records and exact byte counts from a
/// stream, over a growable buffer of its own bounded by a maximum size.
///
///     net::buffered_reader r(conn);                 // conn: a tcp_stream, unix_stream...
///     for (;;) {
///       auto line = co_await r.read_line();         // result<optional<string_view>>
///       if (!line) co_return line.err();            // recv error, timed_out, message_size
///       if (!*line) break;                          // end of stream
///       handle(**line);                             // valid until the next read call
///     }
///
/// That `for (;;)` is the line loop: name the awaited result, then test it. (Under g++ 12
/// `while (auto l = co_await r.read_line())` in a body without other locals hangs, and an
/// iterator whose ++ must co_await cannot be a range-for anyway.)
///
/// Views, not strings: every read returns a std::string_view into the reader's buffer,
/// valid until the next read call (read_*) on the reader or its destruction — zero-copy
/// for the common parse-and-forget use; `std::string(*v)` keeps a copy. Only a read call
/// moves or overwrites bytes, so buffered() and consume() do not invalidate it.
///
/// End of stream: a read_until / read_line that meets it after some bytes returns those
/// bytes (the unterminated last line, as std::getline does), and the next one returns
/// std::nullopt. read_some returns an empty view; read_exact with fewer than n bytes left
/// fails with no_message_available ("read_exact (end of stream)"), the bytes kept buffered.
///
/// Limits: the buffer never grows past `max_size` (options). A record longer than the
/// call's `max` fails with std::errc::message_size, operation naming the call and the limit
/// ("read_line (line longer than max)"); nothing is consumed, so the reader is left at the
/// start of that record with up to `max` of its bytes in buffered(): close the stream, or
/// consume() them and read on (the rest of the record comes next).
///
/// Timeouts and cancellation: the reader awaits the stream's own recv, so the stream's
/// read timeout (stream_socket::set_read_timeout, an idle deadline per recv) and the
/// task's stop token apply as they do to recv: the call ends with that error and every
/// byte received so far stays buffered, so a later call carries on where it stopped. A
/// deadline for a whole call is saturn::with_timeout(d, r.read_line()): the same, plus
/// timed_out.
///
/// Why a template over the stream and not a type-erased one: each stream's recv is its own
/// awaitable (the socket's lives in the caller's frame and allocates nothing; a TLS
/// stream's may be a task), and a template awaits it in place — erasing would cost a task
/// or an indirect call per recv for a choice between two or three types known at compile
/// time. The byte handling, which does not depend on the stream, is compiled once
/// (detail::read_buffer, src/net/buffered_reader.cpp).
///
/// Threading: like the stream, one task uses a reader at a time; the reader holds a
/// reference to the stream, which must outlive it (the stream may still be used to send).
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>

namespace saturn::net {

/// Buffer sizes of a buffered_reader.
struct buffered_reader_options {
  /// Bytes allocated at the first read; the buffer doubles from there as records need.
  std::size_t initial_size = 4096;
  /// Most bytes the reader ever buffers: its memory bound, and the longest record a call
  /// can return.
  std::size_t max_size = 64 * 1024;
};

/// A stream a buffered_reader can read: `co_await s.recv(span<byte>)` gives a
/// result<size_t>, 0 at end of stream (stream_socket, tcp_stream, unix_stream).
template <class S>
concept recv_stream = requires(S& s, std::span<std::byte> b) { s.recv(b); };

namespace detail {

/// The reader's bytes: [m_begin, m_end) of m_data are buffered and not consumed yet. Only
/// prepare() moves bytes (compacting or growing), so views stay valid until it runs.
/// Threading: a plain value, used by one task at a time.
class read_buffer {
 public:
  explicit read_buffer(const buffered_reader_options& o) noexcept;

  /// The buffered bytes.
  std::string_view data() const noexcept { return {m_data.get() + m_begin, m_end - m_begin}; }
  std::size_t size() const noexcept { return m_end - m_begin; }
  std::size_t max_size() const noexcept { return m_max; }
  /// Drops the first `n` buffered bytes (n <= size()).
  void consume(std::size_t n) noexcept { m_begin += n; }
  /// Free space after the buffered bytes, with room for at least `total` buffered bytes
  /// in all (size() < total <= max_size()): compacts or grows. Invalidates views. May
  /// throw std::bad_alloc.
  std::span<std::byte> prepare(std::size_t total);
  /// Marks `n` bytes of the span prepare() returned as received.
  void commit(std::size_t n) noexcept { m_end += n; }

 private:
  std::unique_ptr<char[]> m_data;
  std::size_t m_cap = 0;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
  std::size_t m_initial;
  std::size_t m_max;
};

/// Where a record ends in `buf`: the length up to and including `delim`, found at or after
/// `from`, or npos.
std::size_t find_delimiter(std::string_view buf, std::string_view delim, std::size_t from) noexcept;

}  // namespace detail

/// Reads delimited records, lines and exact byte counts from `Stream` (see the file
/// comment for views, end of stream, limits, timeouts and the line loop).
/// Threading: one task at a time; every read suspends (or not, when the bytes are already
/// buffered) and is cancellable through the task's stop token, leaving what it received
/// buffered.
template <recv_stream Stream>
class buffered_reader {
 public:
  /// A record or line, or std::nullopt at end of stream.
  using record = std::optional<std::string_view>;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// Reads from `s`, which must outlive the reader. Allocates nothing until the first read.
  explicit buffered_reader(Stream& s, const buffered_reader_options& o = {}) noexcept : m_stream(&s), m_buf(o) {}
  buffered_reader(buffered_reader&&) noexcept = default;
  buffered_reader& operator=(buffered_reader&&) noexcept = default;

  /// The bytes up to and including the next `delim` (so a record that ends at end of
  /// stream is told apart by its missing delimiter), at most `max` bytes in all (npos or
  /// more than max_size: max_size). `delim` must stay alive until the await ends.
  task<result<record>> read_until(std::string_view delim, std::size_t max = npos) {
    return read_delimited(delim, '\0', clamp(max), false);
  }
  /// The bytes up to and including the next `delim` byte; as above.
  task<result<record>> read_until(char delim, std::size_t max = npos) {
    return read_delimited({}, delim, clamp(max), false);
  }
  /// The next line without its "\n" or "\r\n", at most `max` bytes of it (npos: up to
  /// max_size - 2). A last line without "\n" is returned as is.
  task<result<record>> read_line(std::size_t max = npos) {
    const std::size_t line_max = max >= m_buf.max_size() - 2 ? m_buf.max_size() - 2 : max;
    return read_delimited({}, '\n', line_max, true);
  }
  /// Exactly `n` bytes (n <= max_size, else message_size).
  task<result<std::string_view>> read_exact(std::size_t n);
  /// What is buffered, or else the bytes of one recv; an empty view at end of stream.
  task<result<std::string_view>> read_some();

  /// The bytes received and not yet returned (e.g. a body after a header; what a failed
  /// read left). Does not suspend; the view is valid until the next read call.
  std::string_view buffered() const noexcept { return m_buf.data(); }
  /// Drops the first `n` (<= buffered().size()) buffered bytes.
  void consume(std::size_t n) noexcept { m_buf.consume(n); }
  /// True once the stream's end was seen (buffered bytes may remain).
  bool eof() const noexcept { return m_eof; }
  /// The stream read from.
  Stream& stream() noexcept { return *m_stream; }

 private:
  std::size_t clamp(std::size_t max) const noexcept { return max > m_buf.max_size() ? m_buf.max_size() : max; }
  /// One recv into the buffer (room for `total` buffered bytes): false at end of stream.
  task<result<bool>> fill(std::size_t total);
  task<result<record>> read_delimited(std::string_view delim, char one, std::size_t max, bool line);

  Stream* m_stream;
  detail::read_buffer m_buf;
  bool m_eof = false;
};

template <recv_stream Stream>
task<result<bool>> buffered_reader<Stream>::fill(std::size_t total) {
  std::span<std::byte> space = m_buf.prepare(total);
  if (space.size() > (1u << 30))
    space = space.first(1u << 30);  // recv takes an unsigned length
  // Awaited as a prvalue: the socket's awaiter is immovable (it lives where it was
  // built), a task is awaitable only as an rvalue; neither is an aggregate.
  auto n = co_await m_stream->recv(space);
  if (!n)
    co_return n.err();
  if (*n == 0) {
    m_eof = true;
    co_return false;
  }
  m_buf.commit(*n);
  co_return true;
}

template <recv_stream Stream>
task<result<typename buffered_reader<Stream>::record>> buffered_reader<Stream>::read_delimited(
    std::string_view delim, char one, std::size_t max, bool line) {
  // lifetime: `one` is a copy in this frame, so the view of it lives as long as the call.
  const std::string_view d = delim.empty() ? std::string_view(&one, 1) : delim;
  const char* name = line ? "read_line (line longer than max)" : "read_until (record longer than max)";
  // How many buffered bytes a record may span: its limit plus the terminator.
  const std::size_t window = line ? max + 2 : max;
  std::size_t from = 0;  // searched before, without a match: not searched again
  for (;;) {
    const std::string_view buf = m_buf.data();
    const std::size_t len = detail::find_delimiter(buf, d, from);
    if (len != std::string_view::npos) {
      std::size_t body = len;
      if (line) {
        body -= 1;
        if (body > 0 && buf[body - 1] == '\r')
          body -= 1;
      }
      if (body > max)
        co_return error{std::make_error_code(std::errc::message_size), name};
      m_buf.consume(len);
      co_return record(buf.substr(0, body));
    }
    if (buf.size() >= window)
      co_return error{std::make_error_code(std::errc::message_size), name};
    if (m_eof) {
      if (buf.empty())
        co_return record{};
      if (buf.size() > max)
        co_return error{std::make_error_code(std::errc::message_size), name};
      m_buf.consume(buf.size());
      co_return record(buf);  // the last record, unterminated
    }
    from = buf.size() >= d.size() ? buf.size() - d.size() + 1 : 0;
    auto more = co_await fill(buf.size() + 1);  // <= window <= max_size
    if (!more)
      co_return more.err();
  }
}

template <recv_stream Stream>
task<result<std::string_view>> buffered_reader<Stream>::read_exact(std::size_t n) {
  if (n > m_buf.max_size())
    co_return error{std::make_error_code(std::errc::message_size), "read_exact (n over max_size)"};
  while (m_buf.size() < n) {
    if (m_eof)
      co_return error{std::make_error_code(std::errc::no_message_available), "read_exact (end of stream)"};
    auto more = co_await fill(n);
    if (!more)
      co_return more.err();
  }
  const std::string_view out = m_buf.data().substr(0, n);
  m_buf.consume(n);
  co_return out;
}

template <recv_stream Stream>
task<result<std::string_view>> buffered_reader<Stream>::read_some() {
  if (m_buf.size() == 0 && !m_eof) {
    auto more = co_await fill(1);
    if (!more)
      co_return more.err();
  }
  const std::string_view out = m_buf.data();
  m_buf.consume(out.size());
  co_return out;
}

}  // namespace saturn::net
