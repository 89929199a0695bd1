/// \file
/// `tcp_stream`: a connected TCP socket (see stream_socket for receive/send), and
/// `tcp_stream::connect` with an optional timeout.
#pragma once

#include <saturn/net/stream_socket.hpp>
#include <saturn/task/task.hpp>

#include <chrono>

namespace saturn::net {

/// A connected TCP stream. Threading as stream_socket.
class tcp_stream : public stream_socket {
 public:
  using stream_socket::stream_socket;

  /// Connects to `to` (TCP_NODELAY set). `timeout` > 0 bounds the attempt: ETIMEDOUT when
  /// it passes ("connect: Connection timed out"); ECONNREFUSED when nobody listens.
  /// Suspends; cancellable through the task's stop token.
  static task<result<tcp_stream>> connect(address to, std::chrono::nanoseconds timeout = {});
};

}  // namespace saturn::net
