/// \file
/// Middleware: a wrapper around handlers (logging, auth, compression, deadlines). A
/// middleware receives the request, its route parameters and the next handler, and
/// decides whether and how to call it:
///
///     routes.wrap([](const http::request& req, const http::route_params& p,
///                    const http::handler& next) -> task<http::response> {
///       if (req.header("Authorization").empty()) co_return http::response(401, "text/plain", "who?\n");
///       co_return co_await next(req, p);
///     });
///     routes.wrap(http::compression());                              // gzip / br per Accept-Encoding
///     routes.get("/slow", http::with_deadline(std::chrono::seconds(2), slow_handler));  // 504 past 2 s
///
/// router::wrap applies a middleware to every route, those added before and after it; the
/// last one wrapped runs first (outermost).
///
/// Threading: a middleware runs where its handler runs (any worker); it is called
/// concurrently for different requests, so it must not keep per-request state outside its
/// coroutine frame.
#pragma once

#include <saturn/http/compression.hpp>
#include <saturn/http/router.hpp>

#include <chrono>
#include <functional>

namespace saturn::http {

/// `fn` wrapped in `m`.
handler wrap(handler fn, middleware m);

/// A middleware that answers 504 (Gateway Timeout; the handler's upstream work did not
/// finish) when the handler has not answered within `d`: the handler is cancelled through
/// its stop token (its awaits end with operation_canceled) and awaited until it has ended,
/// so nothing of it outlives the request. A handler that answers despite the stop (it
/// caught the cancellation) still gets 504: its answer came too late. When the server's
/// own stop cancels the handler first, the answer is 503 and the connection closes.
middleware deadline(std::chrono::milliseconds d);

/// `fn` with deadline(d): the per-route form.
inline handler with_deadline(std::chrono::milliseconds d, handler fn) { return wrap(std::move(fn), deadline(d)); }
/// The same for a handler that takes the request alone.
template <request_handler F>
  requires(!std::is_invocable_v<F&, const request&, const route_params&>)
handler with_deadline(std::chrono::milliseconds d, F fn) {
  return with_deadline(d, handler([f = std::move(fn)](const request& req, const route_params&) mutable { return f(req); }));
}

/// A middleware that compresses every finished response as compress_response does.
middleware compression(compression_options opts = {});

}  // namespace saturn::http
