/// \file
/// An HTTP request (HTTP/1.1 as the parser leaves it, or one HTTP/2 stream's): every
/// string is a view into the connection's memory (for HTTP/1.1 its receive buffer, with no
/// copy; for HTTP/2 the stream's decoded fields), valid for as long as the request's
/// handler runs. HTTP/2's `:authority` appears as a `host` field when the request has
/// none; its other pseudo-fields are method, target and path.
#pragma once

#include <saturn/http/query.hpp>
#include <saturn/http/request_body.hpp>
#include <saturn/http/route_params.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace saturn::http {

namespace detail {
class h2_session;
}  // namespace detail

/// One header field: name as received (compare with iequals), value without surrounding OWS.
struct header_field {
  std::string_view name;
  std::string_view value;
};

/// ASCII case-insensitive equality (header names, tokens).
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z')
      x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z')
      y = static_cast<unsigned char>(y + 32);
    if (x != y)
      return false;
  }
  return true;
}

/// The most header fields one request may carry; more is answered with 431.
inline constexpr std::size_t max_header_fields = 100;

/// A parsed request. Threading: a plain value owned by one connection; its views (the
/// header fields too) point into that connection's buffers and stay valid while the
/// handler runs.
class request {
 public:
  std::string_view method;   ///< token, e.g. "GET" (case-sensitive per RFC 9110)
  std::string_view target;   ///< request-target as received
  /// The target's path (before '?') as received, percent-encoding included; "*" for
  /// asterisk-form (OPTIONS), "host:port" for authority-form (CONNECT), "/" for an
  /// absolute-form target with no path. The server routes on its normalized form
  /// (normalize_path in router.hpp).
  std::string_view path;
  std::string_view raw_query;  ///< after '?', without it, still encoded; empty if none
  std::uint8_t version_major = 1;  ///< 2 for HTTP/2 (then version_minor is 0)
  std::uint8_t version_minor = 1;  ///< 0 for HTTP/1.0, 1 for HTTP/1.1
  bool keep_alive = true;          ///< the connection stays open after the response
  bool chunked = false;            ///< the body came with Transfer-Encoding: chunked

  /// The query's name/value pairs (a view over raw_query: see query.hpp). Any thread
  /// that may read the request; does not suspend or allocate.
  query_params query() const noexcept { return query_params(raw_query); }
  /// Every header field, in order received.
  std::span<const header_field> headers() const noexcept { return {m_headers, m_count}; }
  /// The value of the first field named `name` (case-insensitive), or an empty view.
  std::string_view header(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < m_count; ++i)
      if (iequals(m_headers[i].name, name))
        return m_headers[i].value;
    return {};
  }
  /// The matched route's `{name}` values (empty outside a handler, or for a route
  /// without parameters). The same values the two-argument handler form receives.
  const route_params& params() const noexcept { return m_params != nullptr ? *m_params : k_no_params; }
  /// The body (request_body.hpp): `body().view()` on a buffered route (the default; the
  /// bytes de-chunked), `co_await body().read(buf)` / `read_all(limit)` on either kind.
  /// Reading changes the body's position only, hence usable from a `const request&`;
  /// the handler's task only, one read at a time.
  request_body& body() const noexcept { return m_body; }

 private:
  friend class request_parser;
  friend class server;
  friend class detail::h2_session;
  inline static const route_params k_no_params{};
  const route_params* m_params = nullptr;
  mutable request_body m_body;
  // The fields live with the connection (the parser's array, an HTTP/2 stream's vector):
  // a request inline with 100 of them was 3.3 KB, and an HTTP/2 connection holds one per
  // open stream (25,600 under HttpArena's h2 load: every stream's touch missed the cache).
  const header_field* m_headers = nullptr;
  std::size_t m_count = 0;
};

}  // namespace saturn::http
