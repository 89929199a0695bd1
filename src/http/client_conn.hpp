// http::client internals: one connection (TCP or TLS) with its read buffer, the pool of
// one origin, a parsed request target, and the client's pool of origins (the lease a
// request holds on a connection and its pool slot is detail::conn_lease, client.hpp).
#pragma once

#include <saturn/http/client.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/sync/semaphore.hpp>
#include <saturn/tls/stream.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

/// The connections of one origin ("http://host:port"). Lives as long as the client.
struct origin_pool {
  origin_pool(std::string k, std::size_t cap) : key(std::move(k)), slots(cap) {}
  const std::string key;  // for error messages
  semaphore slots;        // one unit per connection that may be open
  std::mutex mutex;       // guards idle
  std::vector<std::unique_ptr<client_conn>> idle;  // most recently used last
};

/// One request URL, parsed once: the URL split, its origin's pool, and the part of the
/// request head every request to it sends. Immutable, shared by the requests using it.
struct target {
  url u;
  origin_pool* origin = nullptr;
  std::string line_tail;  // " <target> HTTP/1.1\r\nHost: <authority>\r\n"
};

struct client_pool {
  explicit client_pool(client_options o);
  const std::uint64_t id;  // unique in the process (never reused): the per-thread target cache's key
  const client_options opts;
  const std::string user_agent_line;  // "User-Agent: ...\r\n", or empty
  std::mutex mutex;  // guards origins (the map itself), default_tls, opened
  std::unordered_map<std::string, std::unique_ptr<origin_pool>> origins;
  std::unique_ptr<tls::context> default_tls;
  std::size_t opened = 0;
};

/// The target for `url_text` (parsed, its origin found or made): from this thread's
/// cache of the last few URLs this pool was asked for, else parsed now. Errors: those of
/// parse_url.
result<std::shared_ptr<const target>> target_for(client_pool& pool, std::string_view url_text);

}  // namespace saturn::http::detail
