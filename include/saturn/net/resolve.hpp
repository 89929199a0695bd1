/// \file
/// `net::resolve`: a host name to socket addresses, through c-ares, without blocking a
/// worker or owning a thread.
///
/// ```
/// auto addrs = co_await net::resolve("example.org", 443);
/// if (!addrs)
///   co_return addrs.err();               // "resolve example.org: no such host (NXDOMAIN) ..."
/// for (const net::address& a : *addrs)   // every address, with port 443 set
///   use(a);
/// ```
///
/// Where an answer comes from, in order:
///  - a numeric host ("10.0.0.1", "::1", "[::1]") is parsed, no lookup at all;
///  - the hosts file (/etc/hosts, and "localhost"): c-ares's file lookup, no query;
///  - DNS: queries to the servers of /etc/resolv.conf (or resolve_options::servers),
///    over UDP, retried over TCP when the answer is truncated.
/// A name in the hosts file is answered from there even when every server is down.
///
/// Errors are saturn::error values whose code is in resolve_category() (compare with
/// `net::is(e, resolve_errc::not_found)`; the timeout compares equal to
/// std::errc::timed_out) and whose operation names the host, and for a timeout the tries
/// and servers: "resolve a.test (2 tries against 127.0.0.1:5353): timed out ...".
#pragma once

#include <saturn/net/address.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace saturn::net {

/// Which address families a resolve asks for.
enum class ip_family : std::uint8_t {
  any,  ///< IPv4 and IPv6 (A and AAAA queries)
  v4,   ///< IPv4 only (A)
  v6,   ///< IPv6 only (AAAA)
};

/// How to resolve. Threading: a plain value type.
struct resolve_options {
  ip_family family = ip_family::any;
  /// The DNS servers to ask, each "1.2.3.4", "1.2.3.4:5353" or "[::1]:5353"; empty: the
  /// nameservers of /etc/resolv.conf. The hosts file is read first either way.
  std::vector<std::string> servers{};  // {}: no -Wmissing-field-initializers for {.family = ...}
  /// How long the first try waits for an answer from a server. c-ares doubles it on each
  /// later round over the servers, so with one server a name that gets no answer fails
  /// after timeout x (2^tries - 1): 600 ms for 200 ms and 2 tries. resolv.conf's
  /// `options timeout:` and `attempts:` are not used.
  std::chrono::milliseconds timeout{2000};
  /// How many times each server is tried (>= 1).
  int tries = 2;
};

/// How a resolve failed (the c-ares status codes that a lookup can end with).
enum class resolve_errc {
  no_data = 1,              ///< the name exists but has no address of the family asked for
  server_failure = 3,       ///< the server could not answer (SERVFAIL)
  not_found = 4,            ///< no such host (NXDOMAIN, or absent from the hosts file)
  refused = 6,              ///< the server refused the query (REFUSED)
  bad_name = 8,             ///< not a well-formed host name
  timed_out = 12,           ///< no server answered in time (equal to std::errc::timed_out)
  connection_refused = 11,  ///< no DNS server listens where one was configured
};

/// The category of resolve_errc; values that are not a resolve_errc are other c-ares
/// statuses, with c-ares's own message. Immutable singleton, any thread.
const std::error_category& resolve_category() noexcept;
/// A resolve_errc as an error_code.
inline std::error_code make_error_code(resolve_errc e) noexcept { return {static_cast<int>(e), resolve_category()}; }
/// True if `e` is this resolve failure.
inline bool is(const error& e, resolve_errc c) noexcept { return e.code == make_error_code(c); }

/// Resolves `host` to its addresses, each with `port` set, in the order c-ares gives them
/// (RFC 6724 order: the ones most likely to work first; connect tries them in that order).
/// Never an empty vector: a name without addresses is resolve_errc::no_data.
///
/// Threading: await from a saturn task; on any worker, and any number at once (each
/// resolve has its own c-ares channel, so nothing is shared between them). Suspends
/// while waiting for DNS answers: c-ares's sockets are polled through the ring and its
/// timeouts are loop timers; no worker blocks on the network. (Reading /etc/hosts and
/// /etc/resolv.conf, small local files, is done in the calling worker.)
/// Cancellation: a stop of the task's token (with_timeout, when_any) ends the resolve
/// with std::errc::operation_canceled once its polls have been cancelled in the ring;
/// the query is abandoned (its channel and sockets are closed), nothing is left behind.
/// Lifetime: the task is lazy and copies `host` when it starts, so the text `host` views
/// must stay alive until the task is first awaited (awaiting the call in the expression
/// that makes it, `co_await net::resolve(name, 80)`, always is).
task<result<std::vector<address>>> resolve(std::string_view host, std::uint16_t port, resolve_options opts = {});

}  // namespace saturn::net

template <>
struct std::is_error_code_enum<saturn::net::resolve_errc> : std::true_type {};
