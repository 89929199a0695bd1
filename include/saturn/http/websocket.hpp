/// \file
/// WebSocket (RFC 6455), server side: the opening handshake (check_upgrade, accept_key),
/// the frame codec, the incremental UTF-8 validator, message_reader (parsing and
/// assembly without I/O) and session<Stream> (a connection over a saturn stream).
///
/// ```
/// // After answering the upgrade with 101 (handshake_response(check.key)):
/// websocket::session<net::tcp_stream> ws(std::move(stream), leftover_bytes);
/// for (;;) {
///   auto m = co_await ws.receive();
///   if (!m || m->kind == websocket::message_kind::close)
///     break;                         // the close was answered already
///   auto e = co_await ws.echo(*m);   // same opcode, no copy
///   if (!e)
///     break;
/// }
/// ```
#pragma once

#include <saturn/http/websocket/accept.hpp>
#include <saturn/http/websocket/frame.hpp>
#include <saturn/http/websocket/handshake.hpp>
#include <saturn/http/websocket/over_tls.hpp>
#include <saturn/http/websocket/reader.hpp>
#include <saturn/http/websocket/session.hpp>
#include <saturn/http/websocket/utf8.hpp>
