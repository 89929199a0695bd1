/// \file
/// A request's body, one API whichever way the route takes it (route_options):
///
/// - **buffered** (the default): the server reads the whole body (up to
///   parser_limits::max_body, else 413) before the handler starts; view() is all of it and
///   read() / read_all() hand out the same bytes.
/// - **streamed** (`route_options::stream_body`): the handler starts once the head has
///   arrived and pulls the body through read() / read_all(), Content-Length or chunked
///   alike (de-chunked), while the connection holds at most a bounded window of it
///   (route_options::window, 64 KiB by default) whatever the body's size. The
///   `100 Continue` a client asked for (`Expect: 100-continue`) is sent by the first read
///   that has to wait for body bytes, so a handler that answers without reading (a 401, a
///   413) never invites the upload.
///
/// Errors of a streamed read: `errc::message_size` when the body exceeds the route's limit
/// (answer 413), `errc::bad_message` for broken chunked framing (answer 400),
/// `errc::connection_reset` / `errc::timed_out` when the client went away or stalled past
/// server_options::header_timeout between two pieces. After any of them, or when the
/// handler returns before reading the whole body, the server closes the connection once
/// the response is sent (`Connection: close`): the rest of the body cannot be told apart
/// from a next request.
///
/// Threading: belongs to its request; used by the handler's task only (one read at a
/// time). Nothing here may be used after the handler's task ends.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace saturn::http {

namespace detail {
class h2_session;
/// Where a streamed body's bytes come from: the connection implements it.
struct body_source {
  /// The next decoded piece of the body (a view into the connection's window, valid until
  /// the next call), empty at the end of the body.
  virtual task<result<std::string_view>> next() = 0;

 protected:
  ~body_source() = default;
};
}  // namespace detail

/// See the file comment.
class request_body {
 public:
  /// The whole body of a buffered route (a view into the connection's buffer, valid while
  /// the handler runs); empty for a streamed route. Does not suspend.
  std::string_view view() const noexcept { return m_source != nullptr ? std::string_view() : m_view; }
  /// True for a streamed route's body (read it with read / read_all).
  bool streamed() const noexcept { return m_source != nullptr; }
  /// The body's length when the request declared it (Content-Length), or nullopt
  /// (chunked). 0 for a request with no body.
  std::optional<std::uint64_t> length() const noexcept { return m_length; }

  /// Copies up to `buf.size()` next bytes of the body into `buf`; returns how many, 0 at
  /// the end of the body (or for an empty `buf`). Suspends while a streamed body's bytes
  /// are on their way; see the file comment for its errors.
  task<result<std::size_t>> read(std::span<char> buf);
  /// The rest of the body as one string; `errc::message_size` once it passes `limit`
  /// bytes (what was read is dropped). Suspends like read.
  task<result<std::string>> read_all(std::size_t limit);
  /// The next piece of the body as the connection holds it, without a copy: a view valid
  /// until the next read / next_piece / read_all; empty at the end. Suspends like read.
  task<result<std::string_view>> next_piece();

 private:
  friend class request_parser;
  friend class server;
  friend class detail::h2_session;
  void reset_buffered(std::string_view v, std::optional<std::uint64_t> length) noexcept {
    m_view = v;
    m_length = length;
    m_source = nullptr;
    m_pending = {};
    m_taken = false;
  }
  void reset_streamed(detail::body_source* src, std::optional<std::uint64_t> length) noexcept {
    m_view = {};
    m_length = length;
    m_source = src;
    m_pending = {};
    m_taken = false;
  }

  std::string_view m_view;               // buffered: the body
  std::optional<std::uint64_t> m_length;  // Content-Length, if any
  detail::body_source* m_source = nullptr;  // streamed: the connection
  std::string_view m_pending;            // the part of the last piece read() has not copied yet
  bool m_taken = false;                  // buffered: next_piece handed the view out already
};

}  // namespace saturn::http
