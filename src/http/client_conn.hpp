// http::client internals: one connection (TCP or TLS) with its read buffer, the pool of
// one origin, and the lease a request holds on a connection and its pool slot.
#pragma once

#include <saturn/http/client.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/sync/semaphore.hpp>
#include <saturn/tls/stream.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace saturn::http::detail {

/// A connected socket, plain or TLS, and the bytes read from it not yet parsed
/// ([begin, end) of buf).
struct client_conn {
  net::tcp_stream tcp;              // plain connections
  std::optional<tls::stream> tls;   // https: owns the socket
  std::vector<char> buf = std::vector<char>(16 * 1024);
  std::size_t begin = 0, end = 0;
  std::chrono::steady_clock::time_point idle_since{};
  bool reused = false;  // served a request before this one

  std::size_t buffered() const noexcept { return end - begin; }
  const char* data() const noexcept { return buf.data() + begin; }
  void consume(std::size_t n) noexcept { begin += n; }
  /// Reads more bytes after the buffered ones (compacting or growing the buffer up to
  /// `max_buffer`): the count, 0 at end of stream.
  task<result<std::size_t>> read_more(std::chrono::milliseconds timeout, std::size_t max_buffer);
  /// Writes all of `bytes`.
  task<result<void>> write_all(std::string_view bytes, std::chrono::milliseconds timeout);
};

/// The connections of one origin.
struct origin_pool {
  explicit origin_pool(std::size_t cap) : slots(cap) {}
  semaphore slots;  // one unit per connection that may be open
  std::vector<std::unique_ptr<client_conn>> idle;  // most recently used last
};

struct client_pool {
  explicit client_pool(client_options o) : opts(std::move(o)) {}
  client_options opts;
  std::mutex mutex;  // guards origins (the map and each idle list), default_tls
  std::map<std::string, std::unique_ptr<origin_pool>> origins;
  std::unique_ptr<tls::context> default_tls;
  std::size_t opened = 0;
};

/// A request's hold on a pool slot and, once connected, on a connection. Its destructor
/// gives the connection back (when `reusable`) or closes it, then frees the slot.
struct conn_lease {
  conn_lease(std::shared_ptr<client_pool> p, origin_pool* o) : pool(std::move(p)), origin(o) {}
  conn_lease(const conn_lease&) = delete;
  conn_lease& operator=(const conn_lease&) = delete;
  ~conn_lease();

  std::shared_ptr<client_pool> pool;
  origin_pool* origin;
  std::unique_ptr<client_conn> conn;
  bool reusable = false;
};

}  // namespace saturn::http::detail
