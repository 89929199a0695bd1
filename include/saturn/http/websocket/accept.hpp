/// \file
/// `websocket::accept`: a WebSocket endpoint on a route in one call. The handler checks the
/// upgrade and answers 101; the server then hands the connection to a session and runs
/// the given function on it.
///
///     routes.get("/ws", [](const http::request& req) -> task<http::response> {
///       co_return websocket::accept(req, [](websocket::session<net::tcp_stream&>& s) -> task<void> {
///         for (;;) {
///           auto m = co_await s.receive();
///           if (!m || m->kind == websocket::message_kind::close) break;
///           auto sent = co_await s.echo(*m);
///           if (!sent) break;
///         }
///       });
///     });
#pragma once

#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/websocket/handshake.hpp>
#include <saturn/http/websocket/over_tls.hpp>
#include <saturn/http/websocket/session.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/task/task.hpp>

#include <string>
#include <type_traits>
#include <utility>

namespace saturn::http::websocket {

/// The answer to `req`: for a valid upgrade (check_upgrade), a 101 with Upgrade,
/// Connection and Sec-WebSocket-Accept whose protocol switch runs `fn(session&)` over the
/// connection (the bytes that came after the request included) and closes the connection
/// when it returns; otherwise 400, or 426 with `Sec-WebSocket-Version: 13`, naming the
/// reason. `fn` is `task<void>(session<net::tcp_stream&>&)`; it runs under the server's
/// stop token (its receive() ends with operation_canceled at server stop). On an HTTPS
/// connection the session is `session<tls_stream_ref>` (over_tls.hpp): a handler that
/// takes either (`[](auto& s) -> task<void>`) serves wss:// too; one that takes only the
/// plain session gets 501 over TLS.
/// Threading: call from the handler (any worker); does not suspend.
template <class F>
response accept(const request& req, F fn, session_options opts = {}) {
  upgrade_check chk = check_upgrade(req);
  if (!chk) {
    response refused(chk.status, "text/plain", std::string(chk.reason) + "\n");
    if (chk.status == 426)
      refused.add_header("Sec-WebSocket-Version", "13");
    return refused;
  }
  response r;
  r.add_header("Upgrade", "websocket");
  r.add_header("Connection", "Upgrade");
  r.add_header("Sec-WebSocket-Accept", accept_key(chk.key));
  // lifetime: the server keeps this function alive until the task it returns has ended,
  // so the coroutine may use the lambda's captures.
  auto plain = [fn, opts](net::tcp_stream& s, std::span<const std::byte> leftover) mutable -> task<void> {
    session<net::tcp_stream&> ws(s, leftover, opts);
    co_await fn(ws);
  };
  if constexpr (std::is_invocable_v<F&, session<tls_stream_ref>&>) {
    // A handler that takes any session (a generic lambda) also serves wss:// on HTTPS.
    r.set_upgrade(std::move(plain),
                  [fn = std::move(fn), opts](tls::stream& s, std::span<const std::byte> leftover) mutable -> task<void> {
                    session<tls_stream_ref> ws(tls_stream_ref{s}, leftover, opts);
                    co_await fn(ws);
                  });
  } else {
    r.set_upgrade(std::move(plain));  // over HTTPS: 501 (the handler takes a plain stream)
  }
  return r;
}

}  // namespace saturn::http::websocket
