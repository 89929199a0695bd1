/// \file
/// The router: (method, path pattern) → handler. Patterns are literal segments and
/// `{name}` parameters, one path segment each (`/delay/{ms}`), optionally ending with a
/// catch-all `{*name}` that takes the rest of the path, '/' included and possibly empty
/// (`/static/{*path}` matches "/static/" with path "" and "/static/css/a.css" with
/// "css/a.css", not "/static"). A parameter's value is percent-decoded when read
/// (route_params::get; route_params::raw keeps the matched bytes). Handlers are coroutines
/// (`task<response>`), so a handler may await a timer, a socket or a channel without
/// blocking its worker.
///
/// A path is matched byte for byte after normalize_path; a method that matches no route of
/// a path that exists is 405, a method nobody here knows 501 (RFC 9110 §15.5.6, §15.6.2).
///
/// Threading: add routes before serving; matching is read-only and may run on every worker
/// at once.
#pragma once

#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/task/task.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace saturn::http {

/// A handler: given the request and the route's parameters, produces the response. Both
/// stay valid until the returned task ends. A handler that needs no parameters (or reads
/// them as `req.params()`) may take the request alone; router::add accepts both forms.
using handler = std::function<task<response>(const request&, const route_params&)>;

/// A handler wrapper (see middleware.hpp): (request, parameters, next) → response. `next`
/// stays valid until the returned task ends.
using middleware = std::function<task<response>(const request&, const route_params&, const handler& next)>;

/// How a route takes its request. The default buffers the body (up to
/// parser_limits::max_body) before the handler starts.
struct route_options {
  /// Start the handler once the head has arrived and let it read the body through
  /// `req.body().read(buf)` / `read_all(limit)` (request_body.hpp): memory per connection
  /// stays within `window` whatever the body's size. For uploads and proxies.
  bool stream_body = false;
  /// A streamed body's limit: a Content-Length above it is answered 413 (and the
  /// connection closed) before the handler runs; a chunked body that passes it fails the
  /// handler's read with errc::message_size. 0: parser_limits::max_body.
  std::uint64_t max_body = 0;
  /// Bytes of a streamed body the connection holds at most at once (beyond the head).
  std::size_t window = 64 * 1024;
};

/// A handler of the short form: the request alone (its parameters are `req.params()`).
template <class F>
concept request_handler = std::is_invocable_r_v<task<response>, F&, const request&>;

/// The result of a match: the handler (null if none), its parameters, and the status to
/// answer when there is no handler: 404 no such path, 405 the path exists for other
/// methods (answer with Allow: router::allowed_methods), 501 a method the router does not
/// recognize (router::recognizes), whatever the path.
struct route_match {
  const handler* fn = nullptr;
  route_params params;
  int status = 404;
  const route_options* options = nullptr;  ///< the route's options when fn is set
  unsigned route = 0;                      ///< the route's index (router::route_pattern) when fn is set
};

namespace detail {
std::string_view normalize_escaped_path(std::string_view path, std::string& scratch);
}  // namespace detail

/// The form of `path` the router matches (RFC 3986 §6.2.2): each %XX that encodes an
/// unreserved character (ALPHA DIGIT - . _ ~) decoded, every other %XX kept with its hex
/// digits upper-cased, so "/%70laintext" routes as "/plaintext" and "/a%2fb" as "/a%2Fb"
/// (never as "/a/b"). A path without '%' is returned as is, with no copy; otherwise the
/// result is built in `scratch` and views it. Threading: any thread; does not suspend.
inline std::string_view normalize_path(std::string_view path, std::string& scratch) {
  if (path.find('%') == std::string_view::npos)
    return path;
  return detail::normalize_escaped_path(path, scratch);
}

/// See the file comment.
class router {
 public:
  /// Adds a route. `method` is matched exactly ("GET" also serves HEAD); `pattern` starts
  /// with '/'. Throws std::invalid_argument for a malformed pattern (a programming error).
  void add(std::string_view method, std::string_view pattern, handler fn, route_options opts = {});
  /// Adds a route whose handler takes the request alone (`task<response>(const request&)`).
  template <request_handler F>
    requires(!std::is_invocable_v<F&, const request&, const route_params&>)
  void add(std::string_view method, std::string_view pattern, F fn, route_options opts = {}) {
    add(
        method, pattern,
        handler([f = std::move(fn)](const request& req, const route_params&) mutable { return f(req); }), opts);
  }
  /// Shorthand for add("GET", ...), either handler form.
  template <class F>
  void get(std::string_view pattern, F fn, route_options opts = {}) {
    add("GET", pattern, std::move(fn), opts);
  }
  /// Shorthand for add("POST", ...), either handler form.
  template <class F>
  void post(std::string_view pattern, F fn, route_options opts = {}) {
    add("POST", pattern, std::move(fn), opts);
  }
  /// Shorthand for add("PUT", ...), either handler form.
  template <class F>
  void put(std::string_view pattern, F fn, route_options opts = {}) {
    add("PUT", pattern, std::move(fn), opts);
  }
  /// True when some route streams its body (the server then routes each request as soon
  /// as its head has arrived). Read-only: any thread, like match.
  bool streams_bodies() const noexcept { return m_streams; }
  /// Wraps every route's handler in `m`: those added so far and those added later. The
  /// middleware wrapped last runs first. Before serving, like add.
  void wrap(middleware m);
  /// Finds the route for `method` and `path` (no query; normalize_path it first). Routes
  /// are tried in order added.
  route_match match(std::string_view method, std::string_view path) const noexcept;
  /// True for a method this router knows: the methods of RFC 9110 §9 (GET, HEAD, POST, PUT,
  /// DELETE, CONNECT, OPTIONS, TRACE), PATCH (RFC 5789), and any method a route was added
  /// with. Methods are case-sensitive ("get" is not GET). Read-only: any thread, like match.
  bool recognizes(std::string_view method) const noexcept;
  /// The Allow field value for `path` (RFC 9110 §10.2.1): the methods of the routes that
  /// match it, in the order added, HEAD after GET ("GET, HEAD"); empty if none. For "*" (the
  /// server as a whole, `OPTIONS *`): every route's method, then OPTIONS, which the server
  /// answers for "*" itself. Allocates; meant for the rare 405 and OPTIONS answers.
  /// Read-only: any thread, like match.
  std::string allowed_methods(std::string_view path) const;
  /// A handler for the requests no route matches that `accepts(req)` takes — gRPC calls of
  /// an unknown method, say, whatever their path — while the others still get 404, 405 or
  /// 501. One per router (a later call replaces it); before serving, like add. The
  /// middleware of wrap() applies to it too.
  void otherwise(std::function<bool(const request&)> accepts, handler fn, route_options opts = {});
  /// The otherwise() handler if it takes `req` (and its options in `*opts`), else null.
  /// Read-only: any thread, like match.
  const handler* otherwise_for(const request& req, const route_options** opts) const;
  /// How many routes were added (route_match::route is below it). Read-only, like match.
  std::size_t route_count() const noexcept { return m_routes.size(); }
  /// The pattern route `i` was added with ("/delay/{ms}"): the server's metrics label
  /// requests with it. Read-only, like match; `i` below route_count().
  std::string_view route_pattern(std::size_t i) const noexcept { return m_routes[i].pattern; }

 private:
  struct segment {
    std::string text;  // literal text, or the parameter's name
    bool param = false;
    bool rest = false;  // `{*name}`: the last segment, takes the rest of the path
  };
  struct route {
    std::string method;
    std::string pattern;
    std::vector<segment> segments;
    bool literal = true;  // no parameters: compare the whole path
    handler fn;
    route_options opts;
  };
  bool match_route(const route& r, std::string_view path, route_params& out) const noexcept;
  std::vector<route> m_routes;
  std::vector<middleware> m_wrappers;  // applied to routes added later too, in order
  bool m_streams = false;              // some route has stream_body
  std::function<bool(const request&)> m_otherwise_accepts;  // otherwise(): which requests
  handler m_otherwise;                                      // ... and their handler
  route_options m_otherwise_opts;
};

}  // namespace saturn::http
