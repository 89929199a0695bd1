/// \file
/// `tls_stream_ref`: a tls::stream seen as the Stream a websocket::session reads and
/// writes (recv / send / write_all awaitables returning result<std::size_t>), so a
/// WebSocket runs over an HTTPS connection (wss://) exactly as over a plain one. A frame's
/// header and payload are gathered into one TLS record (tls::stream::writev).
///
/// Threading: as tls::stream — one task at a time.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/stream.hpp>

#include <sys/uio.h>

#include <cstddef>
#include <span>
#include <utility>

namespace saturn::http::websocket {

/// A task that can also be awaited as a named local (`auto rd = s.recv(b); co_await rd;`),
/// as session awaits its stream's operations.
template <class T>
struct awaitable_task {
  task<T> t;
  auto operator co_await() & noexcept { return std::move(t).operator co_await(); }
  auto operator co_await() && noexcept { return std::move(t).operator co_await(); }
};

/// See the file comment. Holds a reference: the stream must outlive it.
struct tls_stream_ref {
  tls::stream& s;

  awaitable_task<result<std::size_t>> recv(std::span<std::byte> buf) { return {s.read(buf)}; }
  awaitable_task<result<std::size_t>> send(std::span<const std::byte> buf) { return {s.write(buf)}; }
  awaitable_task<result<std::size_t>> write_all(std::span<const ::iovec> iov) { return {s.writev(iov)}; }
};

}  // namespace saturn::http::websocket
