// One connection's protocol:
//
//   loop: parse every complete request in the buffer → run its handler (a coroutine,
//         awaited in order) → serialize its response into `out`;
//         send `out` in one send (a pipelined batch is coalesced into one write; a send
//         that must wait for room is marked `sending` for the sweeper's send timeout);
//         mark idle / reading for the sweeper; read (one recv, or a multishot receive).
//
// Requests are handled one at a time, so the request's views into the buffer stay valid
// while its handler runs, and responses leave in request order. When the server closes
// first (an error answer — 400, 413, 431, 501, 505 —, Connection: close, HTTP/1.0) it
// half-closes and drains until the client closes, so the client reads the last answer
// instead of a reset.
//
// A handler runs under the server's stop context (server::stop() cancels its awaits);
// the connection's own I/O runs under the root context, so its close is never skipped and
// a read or send registers no stop callback.
#include <saturn/http/server.hpp>
#include <saturn/task/time.hpp>

#include "http/conn_buffer.hpp"
#include "http/connection_registry.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace saturn::http {

namespace {

std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

/// The answer to a request no handler serves (`status` is the router's 404 / 405 / 501).
/// `path` is the normalized path the router saw.
response unrouted(const router& r, const request& req, std::string_view path, int status) {
  if (req.path == "*") {
    // OPTIONS * (the parser allows '*' with OPTIONS only): the server's methods, no body
    // (RFC 9110 §9.3.7).
    response resp;
    resp.content_type = text_value{};
    resp.add_header("Allow", r.allowed_methods("*"));
    return resp;
  }
  if (req.path.front() != '/')
    status = 501;  // authority-form: CONNECT; no tunnels here
  response resp(status, "text/plain", std::string(reason_phrase(status)));
  if (status == 405)
    resp.add_header("Allow", r.allowed_methods(path));  // RFC 9110 §15.5.6: MUST
  return resp;
}

}  // namespace

task<void> server::serve_connection(net::tcp_stream s) {
  detail::conn_entry entry;
  entry.fd = s.fd();
  entry.set(detail::conn_state::idle, detail::coarse_now_ms());
  m_registry->add(&entry);

  const parser_limits& limits = m_opts.limits;
  detail::conn_buffer in(m_opts.read_buffer, limits.max_head + 2 * limits.max_body + 32 * 1024);
  request_parser parser(limits);
  std::string out;
  std::string path_scratch;  // a path with %XX, normalized for routing (no '%': unused)
  bool open = true, linger = false;  // linger: we close first, gracefully
  upgrade_handler upgraded;          // set by a 101 answer: the protocol that takes over
  const bool multishot = m_opts.multishot_receive;

  // One read: a chunk of the multishot receive copied in, or one recv into the buffer.
  // Returns false at end of stream, on error, or past the buffer's bound.
  auto read_more = [&]() -> task<bool> {
    if (multishot) {
      auto rx = s.receive();
      auto got = co_await rx;
      if (!got || got->empty())
        co_return false;
      co_return in.append(*got);
    }
    if (!in.reserve(4096))
      co_return false;
    auto rv = s.recv(in.free_space());
    auto got = co_await rv;
    if (!got || *got == 0)
      co_return false;
    in.commit(*got);
    co_return true;
  };

  while (open) {
    bool completed_any = false;
    for (;;) {
      parse_status st = parser.parse(in.data(), in.size());
      if (st == parse_status::incomplete) {
        if (parser.expects_continue()) {
          // The client waits for this before sending the body (RFC 9110 §10.1.1).
          out.append("HTTP/1.1 100 Continue\r\n\r\n");
          parser.continue_sent();
        }
        break;
      }
      if (st == parse_status::error) {
        write_error(out, parser.error_status(), parser.error_reason(), m_opts.server_name, parser.head_request());
        open = false;
        linger = true;
        break;
      }
      entry.state.store(detail::conn_state::busy, std::memory_order_relaxed);
      request& req = parser.get();
      write_options wo{req.keep_alive, req.version_minor, req.method == "HEAD"};
      const std::string_view path = normalize_path(req.path, path_scratch);
      route_match m = m_router.match(req.method, path);
      if (m.fn) {
        req.m_params = &m.params;  // lifetime: m outlives the handler's task (this block)
        bool threw = false;
        try {
          task<response> t = (*m.fn)(req, m.params);
          // lifetime: t owns the handler's frame until the end of this block.
          response resp = co_await saturn::detail::in_context_awaiter<response>{t.handle(), &m_stop_ctx};
          write_response(out, resp, wo, m_opts.server_name);
          if (resp.close)
            open = false;
          else if (resp.upgrade() && resp.status == 101)
            upgraded = std::move(resp.upgrade());
        } catch (const std::exception&) {
          threw = true;
        }
        req.m_params = nullptr;
        if (threw) {
          write_error(out, 500, "handler failed", m_opts.server_name, wo.head);
          open = false;
        }
      } else {
        write_response(out, unrouted(m_router, req, path, m.status), wo, m_opts.server_name);
      }
      completed_any = true;
      if (!wo.keep_alive)
        open = false;
      in.consume(parser.consumed());
      parser.reset();
      if (!open || upgraded)
        break;  // after a 101 the bytes left in `in` belong to the new protocol
    }
    if (!open)
      linger = true;  // an error, Connection: close, HTTP/1.0 or a handler's close
    if (!out.empty()) {
      // A first non-blocking send(2) straight from this task: on a socket with room (the
      // usual case) the whole batch leaves with no ring round trip and no task wake; what
      // does not fit goes through the ring's send, which waits for room.
      std::size_t done = 0;
      if (m_opts.direct_send) {
        ssize_t n = ::send(s.fd(), out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
          break;
        done = n > 0 ? static_cast<std::size_t>(n) : 0;
      }
      // The rest waits for room, one send at a time: each that moves bytes restarts the
      // send timeout, so only a client that stops reading is closed by it.
      bool failed = false;
      while (done < out.size()) {
        entry.set(detail::conn_state::sending, detail::coarse_now_ms());
        auto send = s.send_some(bytes_of(out).subspan(done));
        auto sent = co_await send;
        if (!sent || *sent == 0) {
          failed = true;
          break;
        }
        done += *sent;
      }
      if (failed)
        break;
      out.clear();
    }
    if (upgraded) {
      // The connection is the new protocol's now: it runs under the stop token like a
      // handler (busy: no HTTP timeout applies; at stop it has stop_grace, then its
      // socket is shut down), and the connection closes when it returns.
      entry.set(detail::conn_state::busy, detail::coarse_now_ms());
      std::span<const std::byte> leftover(reinterpret_cast<const std::byte*>(in.data()), in.size());
      try {
        task<void> t = upgraded(s, leftover);
        co_await saturn::detail::in_context_awaiter<void>{t.handle(), &m_stop_ctx};
      } catch (const std::exception&) {
        // The new protocol failed; nothing of HTTP can be said any more: just close.
      }
      break;
    }
    if (!open)
      break;
    std::int64_t now = detail::coarse_now_ms();
    if (in.empty())
      entry.set(detail::conn_state::idle, now);
    else if (completed_any || entry.state.load(std::memory_order_relaxed) != detail::conn_state::reading)
      entry.set(detail::conn_state::reading, now);  // a partial request begins now
    if (stopping())
      break;
    bool was_empty = in.empty();
    auto more = read_more();
    if (!co_await std::move(more))
      break;
    if (was_empty && entry.state.load(std::memory_order_relaxed) == detail::conn_state::idle)
      entry.set(detail::conn_state::reading, detail::coarse_now_ms());
  }
  if (linger) {
    // Half-close, then drain what the client still sends until it closes (bounded by the
    // header timeout through the sweeper), so the last answer is not lost to a reset.
    auto sh = s.shutdown(SHUT_WR);
    (void)co_await sh;
    entry.set(detail::conn_state::reading, detail::coarse_now_ms());
    for (std::size_t drained = 0; drained < (1u << 20);) {
      std::size_t before = in.size();
      auto more = read_more();
      if (!co_await std::move(more))
        break;
      drained += in.size() - before;
      in.consume(in.size());
    }
  }
  m_registry->remove(&entry);
  auto cl = s.close();
  (void)co_await cl;
  m_slots.release();
}

}  // namespace saturn::http
