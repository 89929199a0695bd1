/// \file
/// `net::connect("host:port")`: resolve a name and connect to the first of its addresses
/// that accepts, each attempt with its own time limit.
///
/// ```
/// auto conn = co_await net::connect("example.org:80", {.attempt_timeout = std::chrono::seconds(3)});
/// if (!conn)
///   co_return conn.err();   // names the host and every address tried, with each failure
/// ```
#pragma once

#include <saturn/net/resolve.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace saturn::net {

/// How to connect. Threading: a plain value type.
struct connect_options {
  /// How long one address may take to accept before the next is tried; 0: no limit of
  /// connect's own (the kernel's SYN retries, about two minutes). Bound the whole connect
  /// with with_timeout.
  std::chrono::nanoseconds attempt_timeout{std::chrono::seconds(10)};
  /// How the host is resolved (family, servers, DNS timeout and tries).
  resolve_options resolve{};
};

/// A "host:port" split in two: host without brackets ("::1" for "[::1]:80").
/// Threading: a plain value type.
struct host_port {
  std::string host;
  std::uint16_t port = 0;
};

/// Splits "host:port", "1.2.3.4:port" or "[v6]:port" (an IPv6 address needs the
/// brackets). The port is required, 1 to 65535. Errors (EINVAL, operation naming the
/// text and what is wrong) for a missing or bad port, an empty host, "::1:80" without
/// brackets. Never suspends; any thread.
result<host_port> split_host_port(std::string_view text);

/// Resolves the host of `host_port` ("name:port", "[v6]:port", a numeric address) and
/// connects to its addresses in the order resolve gives them, one at a time, each
/// attempt bounded by opts.attempt_timeout; the first that accepts is returned
/// (TCP_NODELAY set, as tcp_stream::connect). When none does, the last attempt's error
/// code, with an operation that names the host and every address tried with its failure:
/// "connect a.test:80 tried 127.0.0.3:80 (Connection refused), then 127.0.0.1:80:
/// Connection timed out". A resolve failure is returned as resolve gives it.
///
/// Threading: await from a saturn task, any worker. Suspends. Cancellation: a stop of
/// the task's token ends the current step (resolve or attempt) with
/// std::errc::operation_canceled and tries no further address. Lifetime: as resolve's,
/// the text `host_port` views must stay alive until the task is first awaited.
task<result<tcp_stream>> connect(std::string_view host_port, connect_options opts = {});

}  // namespace saturn::net
