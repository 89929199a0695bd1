/// \file
/// Unix stream sockets: `unix_listener` (bind to a path, "@name" for the abstract
/// namespace) and `unix_stream` (connect), with the stream_socket operations.
#pragma once

#include <saturn/net/stream_socket.hpp>
#include <saturn/net/tcp_listener.hpp>

#include <string_view>

namespace saturn::net {

/// A connected Unix stream socket. Threading as stream_socket.
class unix_stream : public stream_socket {
 public:
  using stream_socket::stream_socket;
  /// Connects to the socket at `path`. Suspends; ENOENT/ECONNREFUSED when nobody listens.
  static task<result<unix_stream>> connect(std::string_view path);
  /// A connected pair (socketpair(2)), for tests and in-process pipes.
  static result<std::pair<unix_stream, unix_stream>> pair() noexcept;
};

/// A listening Unix stream socket. The socket file is not removed on close (unlink it).
class unix_listener : public detail::listener_base {
 public:
  unix_listener() noexcept = default;
  /// socket + bind + listen at `path` (EADDRINUSE when the file exists).
  static result<unix_listener> bind(std::string_view path, const listen_options& opts = {});
  /// The next connection. Suspends; cancellable.
  task<result<unix_stream>> accept();

 private:
  using listener_base::listener_base;
};

}  // namespace saturn::net
