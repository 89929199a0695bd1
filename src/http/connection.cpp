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
// A route with route_options::stream_body is routed as soon as its head is in: the buffer
// is compacted so the head sits at its front with room for one window behind it, and the
// handler pulls the body through a conn_body (below), which decodes what has arrived,
// drops each piece the handler took and reads more only on demand — so a body of any size
// costs one window. A handler that leaves part of the body unread ends the connection.
//
// The protocol is written once over its transport (conn_io.hpp): plain TCP or TLS. Over
// TLS a response that switches protocols (101) runs its TLS handler (response::upgrade_tls,
// websocket::accept sets one) and is refused with 501 when it has none.
//
// A handler runs under the server's stop context (server::stop() cancels its awaits);
// the connection's own I/O runs under the root context, so its close is never skipped and
// a read or send registers no stop callback.
#include <saturn/http/server.hpp>
#include <saturn/task/await_under.hpp>
#include <saturn/task/time.hpp>

#include "http/conn_buffer.hpp"
#include "http/conn_io.hpp"
#include "http/connection_registry.hpp"
#include "http/server_metrics.hpp"
#include "http/unrouted.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>

namespace saturn::http {

namespace {

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// read_into's multishot case (plain TCP): the next chunk of the multishot receive,
/// copied in.
template <class Io>
task<bool> read_multishot(Io& io, detail::conn_buffer& in, detail::request_tally& tally, bool pinned) {
  auto rx = io.s.receive();
  auto got = co_await rx;
  if (!got || got->empty())
    co_return false;
  if (pinned && !in.fits(got->size()))
    co_return false;
  tally.received(got->size());
  co_return in.append(*got);
}

/// read_into's usual case: one receive into the buffer's free space.
template <class Io>
task<bool> read_once(Io& io, detail::conn_buffer& in, detail::request_tally& tally, bool pinned, std::size_t max) {
  if constexpr (Io::tls) {
    if (in.empty()) {
      // Idle: wait for ciphertext before taking the receive buffer (released while the
      // connection waited; see the loop below), so an idle TLS connection holds neither
      // that buffer nor a plaintext one.
      auto wait = io.t.wait_readable();
      auto ready = co_await std::move(wait);
      if (!ready)
        co_return false;
    }
  }
  if (pinned ? !in.fits(max != 0 && max < 4096 ? max : 4096) : !in.reserve(4096))
    co_return false;
  std::span<std::byte> room = in.free_space();
  if (max != 0 && room.size() > max)
    room = room.first(max);
  std::size_t n = 0;
  if constexpr (Io::tls) {
    auto rv = io.recv(room);
    auto got = co_await std::move(rv);
    n = got ? *got : 0;
  } else {
    auto rv = io.recv(room);
    auto got = co_await rv;
    n = got ? *got : 0;
  }
  if (n == 0)
    co_return false;
  tally.received(n);
  in.commit(n);
  co_return true;
}

/// One read into `in`: a chunk of the multishot receive copied in (plain TCP only), or one
/// receive into the buffer's free space. False at end of stream, on error, or past the
/// buffer's bound — or, `pinned`, when the bytes would not fit without moving the buffer (a
/// streamed body's head must stay where the request's views point). Not a coroutine itself:
/// one frame per read, of whichever case runs (the two in one coroutine made a 528-byte
/// frame, past the frame allocator's 512-byte classes: a malloc and a free per request).
template <class Io>
task<bool> read_into(Io& io, detail::conn_buffer& in, detail::request_tally& tally, bool multishot, bool pinned,
                     std::size_t max = 0) {
  if constexpr (!Io::tls) {
    if (multishot)
      return read_multishot(io, in, tally, pinned);
  }
  return read_once(io, in, tally, pinned, max);
}

/// A response that would switch protocols over TLS without a handler for a TLS stream:
/// 501 instead, and the connection closes.
template <class Io>
void refuse_upgrade(response& resp) {
  if constexpr (Io::tls) {
    if (resp.upgrade() && !resp.upgrade_tls()) {
      resp = response(501, "text/plain", "protocol upgrade over TLS is not supported\n");
      resp.close = true;
    }
  }
}

/// A streamed request body, read on the handler's demand (see the file comment). Lives
/// in the connection's frame for the handler's run.
template <class Io>
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and body_source's destructor is protected
class conn_body final : public detail::body_source {
 public:
  conn_body(Io& io, detail::conn_buffer& in, request_parser& parser, std::string& out, detail::conn_entry& entry,
            std::size_t window, bool multishot, bool direct, detail::request_tally& tally) noexcept
      : m_tally(tally),
        m_io(io),
        m_in(in),
        m_parser(parser),
        m_out(out),
        m_entry(entry),
        m_window(window),
        m_multishot(multishot),
        m_direct(direct) {}

  task<result<std::string_view>> next() override {
    if (m_delivered) {
      m_in.truncate(m_parser.drop_body_piece(m_in.data(), m_in.size()));
      m_delivered = false;
    }
    for (;;) {
      if (m_failed)
        co_return m_error;
      parse_status st = m_parser.parse_body_piece(m_in.data(), m_in.size());
      if (st == parse_status::error)
        co_return fail(m_parser.error_status() == 413 ? std::errc::message_size : std::errc::bad_message);
      std::string_view piece = m_parser.body_piece(m_in.data());
      if (st == parse_status::complete)
        m_done = true;
      if (!piece.empty()) {
        m_delivered = true;
        co_return piece;
      }
      if (m_done)
        co_return std::string_view();
      if (m_parser.expects_continue()) {
        // The client waits for this before it sends the body (RFC 9110 §10.1.1); the
        // answers of earlier pipelined requests go first.
        m_out.append("HTTP/1.1 100 Continue\r\n\r\n");
        m_parser.continue_sent();
        m_tally.flush();  // earlier answers leave with it
        auto tx = m_io.send(m_out, m_entry, m_direct);
        bool sent = co_await std::move(tx);
        m_out.clear();
        if (!sent)
          co_return fail(std::errc::connection_reset);
      }
      // At most one window of body bytes after the head (what is there is undecoded
      // framing, a few bytes).
      const std::size_t held = m_in.size() - m_parser.head_size();
      const std::size_t want = held < m_window ? m_window - held : 4096;
      if constexpr (!Io::tls) {
        // A body on its way usually has bytes waiting in the socket: a non-blocking recv(2)
        // from this task takes them with no ring round trip and no task wake. After
        // k_direct_run of them in a row the ring read below runs (and suspends), so one
        // fast upload does not keep its worker from the other connections.
        if (!m_multishot && m_direct_run < k_direct_run && m_in.fits(std::min<std::size_t>(want, 4096))) {
          std::span<std::byte> room = m_in.free_space();
          const ssize_t n = ::recv(m_io.fd(), room.data(), std::min(room.size(), want), MSG_DONTWAIT);
          if (n > 0) {
            ++m_direct_run;
            m_tally.received(static_cast<std::uint64_t>(n));
            m_in.commit(static_cast<std::size_t>(n));
            continue;
          }
          if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            co_return fail(std::errc::connection_reset);
        }
        m_direct_run = 0;
      }
      // Reading: the header timeout applies from here until the next piece arrives.
      m_entry.set(detail::conn_state::reading, detail::coarse_now_ms());
      auto more = read_into(m_io, m_in, m_tally, m_multishot, true, want);
      bool got = co_await std::move(more);
      m_entry.set(detail::conn_state::busy, detail::coarse_now_ms());
      if (!got)
        co_return fail(std::errc::connection_reset);
    }
  }

  /// The whole body was decoded (the connection may serve the next request).
  bool complete() const noexcept { return m_done && !m_failed; }

 private:
  error fail(std::errc e) noexcept {
    m_failed = true;
    m_error = error{std::make_error_code(e), "read request body"};
    return m_error;
  }

  detail::request_tally& m_tally;
  Io& m_io;
  detail::conn_buffer& m_in;
  request_parser& m_parser;
  std::string& m_out;
  detail::conn_entry& m_entry;
  std::size_t m_window;
  bool m_multishot, m_direct;
  static constexpr unsigned k_direct_run = 8;  // direct recvs in a row before a ring read
  unsigned m_direct_run = 0;
  bool m_delivered = false;  // body_piece() was handed out and not dropped yet
  bool m_done = false;
  bool m_failed = false;
  error m_error{};
};

/// A streamed response's body on its way out (response::stream): bytes are framed as
/// framing_of said and appended to the connection's output, which is sent once 16 KiB
/// are pending (or at flush); the head of the response is the first thing in it.
template <class Io>
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and body_writer's destructor is protected
class conn_writer final : public body_writer {
 public:
  conn_writer(Io& io, std::string& out, detail::conn_entry& entry, stream_framing framing, std::uint64_t length,
              bool direct, metrics::counter& tx) noexcept
      : m_tx(tx), m_io(io), m_out(out), m_entry(entry), m_framing(framing), m_left(length), m_direct(direct) {}

  result<void> append(std::string_view bytes) override {
    if (m_failed)
      return m_error;
    if (bytes.empty())
      return result<void>{};
    if (m_framing == stream_framing::length) {
      if (bytes.size() > m_left)
        return fail(std::errc::message_size);
      m_left -= bytes.size();
      m_out.append(bytes);
    } else if (m_framing == stream_framing::chunked) {
      char size[24];
      int n = std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
      m_out.append(size, static_cast<std::size_t>(n));
      m_out.append(bytes);
      m_out.append("\r\n");
    } else {
      m_out.append(bytes);
    }
    return result<void>{};
  }

  void add_trailer(text_value name, text_value value) override {
    m_trailers.add_trailer(std::move(name), std::move(value));  // response's checks
  }

  task<result<void>> send(result<void> prior, bool all) override {
    if (!prior)
      co_return prior;
    if (m_failed)
      co_return m_error;
    if (!all && m_out.size() < 16 * 1024)
      co_return result<void>{};
    auto sent = send_pending();
    co_return co_await std::move(sent);
  }

  /// After the producer returned success: the last chunk, or a check that the declared
  /// length was written. False if the response cannot be completed (close the connection).
  bool finish(const std::vector<std::pair<text_value, text_value>>& static_trailers) {
    if (m_failed)
      return false;
    if (m_framing == stream_framing::chunked) {
      // The last chunk and the trailer section (RFC 9112 §7.1.2): the response's
      // trailers, then the producer's.
      m_out.append("0\r\n");
      for (const auto* list : {&static_trailers, &m_trailers.trailers()})
        for (const auto& [name, value] : *list) {
          m_out.append(name.view());
          m_out.append(": ");
          m_out.append(value.view());
          m_out.append("\r\n");
        }
      m_out.append("\r\n");
    }
    return m_framing != stream_framing::length || m_left == 0;
  }

 private:
  task<result<void>> send_pending() {
    auto tx = m_io.send(m_out, m_entry, m_direct);
    bool sent = co_await std::move(tx);
    if (!sent)
      co_return fail(std::errc::connection_reset);
    detail::server_metrics::add(m_tx, m_out.size());
    m_out.clear();
    m_entry.set(detail::conn_state::busy, detail::coarse_now_ms());
    co_return result<void>{};
  }
  error fail(std::errc e) noexcept {
    m_failed = true;
    m_error = error{std::make_error_code(e), "write response body"};
    return m_error;
  }

  metrics::counter& m_tx;
  Io& m_io;
  std::string& m_out;
  detail::conn_entry& m_entry;
  stream_framing m_framing;
  std::uint64_t m_left;
  bool m_direct;
  bool m_failed = false;
  error m_error{};
  response m_trailers;  // holds the producer's trailer() fields
};

}  // namespace

task<void> server::serve_connection(net::tcp_stream s, cleartext protocols) {
  detail::conn_entry entry;
  entry.fd = s.fd();
  entry.set(detail::conn_state::idle, detail::coarse_now_ms());
  m_registry->add(&entry);
  detail::server_metrics::add(*m_metrics->accepted);
  detail::plain_io io{s};
  auto run = run_connection(io, entry, protocols);
  co_await std::move(run);
  detail::server_metrics::add(*m_metrics->closed);
  // lifetime: serve() returns (and the server may be destroyed) once the registry is
  // empty, so the slot goes back first and remove() is the last touch of the server; the
  // socket closes after it (removed first, so the sweeper never shuts down a reused fd).
  m_slots.release();
  m_registry->remove(&entry);
  auto cl = s.close();
  (void)co_await cl;
}

task<void> server::serve_tls_connection(net::tcp_stream s, const tls::context* ctx) {
  detail::conn_entry entry;
  entry.fd = s.fd();
  // The handshake is part of the first request: the header timeout bounds it (the
  // sweeper shuts the socket down), and so does the handshake's own timeout.
  entry.set(detail::conn_state::reading, detail::coarse_now_ms());
  m_registry->add(&entry);
  detail::server_metrics::add(*m_metrics->accepted);
  auto t = tls::stream::server(*ctx, std::move(s));  // on failure the socket closes with it
  if (t && !stopping()) {
    auto hs = t->handshake(m_opts.header_timeout);
    auto shaken = co_await std::move(hs);
    if (shaken) {
      entry.set(detail::conn_state::idle, detail::coarse_now_ms());
      detail::tls_io io{*t};
      if (t->alpn() == "h2") {
        auto run = run_h2(io, entry, {});
        co_await std::move(run);
      } else {
        auto run = run_connection(io, entry, cleartext::http1);
        co_await std::move(run);
      }
    }
  }
  detail::server_metrics::add(*m_metrics->closed);
  // lifetime: as in serve_connection; the stream keeps its context's state alive itself.
  m_slots.release();
  m_registry->remove(&entry);
  if (t) {
    auto cl = t->close();
    (void)co_await cl;
  }
}

template <class Io>
task<void> server::run_connection(Io& io, detail::conn_entry& entry, cleartext protocols) {
  const parser_limits& limits = m_opts.limits;
  detail::conn_buffer in(m_opts.read_buffer, limits.max_head + 2 * limits.max_body + 32 * 1024);
  request_parser parser(limits);
  std::string out;
  std::string path_scratch;  // a path with %XX, normalized for routing (no '%': unused)
  bool open = true, linger = false;  // linger: we close first, gracefully
  upgrade_handler upgraded;          // set by a 101 answer: the protocol that takes over
  tls_upgrade_handler upgraded_tls;  // the same over TLS (upgraded is set too, as the flag)
  const bool multishot = !Io::tls && m_opts.multishot_receive;
  detail::server_metrics& stats = *m_metrics;
  detail::request_tally tally(stats);  // flushed before each batch of answers is sent

  const bool streams = m_router.streams_bodies();
  // The first bytes of a cleartext connection decide between HTTP/1.1 and h2c (the
  // preface); until enough of them are in, nothing is parsed.
  bool sniff = protocols != cleartext::http1;
  // Runs a matched route's handler under the stop context; nullopt if it threw.
  auto call = [&](const route_match& m, request& req) -> task<std::optional<response>> {
    req.m_params = &m.params;  // lifetime: m outlives the handler's task (the caller's block)
    std::optional<response> resp;
    try {
      task<response> t = (*m.fn)(req, m.params);
      // lifetime: t owns the handler's frame until the end of this block.
      resp.emplace(co_await await_under(t, m_stop_ctx));
    } catch (const std::exception&) {
      resp.reset();
    }
    req.m_params = nullptr;
    co_return resp;
  };
  // Runs a streamed response's producer after its head went into `out`, under the stop
  // context like a handler; false if the response could not be completed (then the
  // connection must close: the client sees a truncated body).
  auto produce = [&](const response& resp, stream_framing framing) -> task<bool> {
    conn_writer<Io> w(io, out, entry, framing, resp.stream_length().value_or(0), m_opts.direct_send,
                      *stats.bytes_sent);
    bool ok = false;
    try {
      task<result<void>> t = (*resp.producer())(w);
      result<void> r = co_await await_under(t, m_stop_ctx);
      ok = r.has_value();
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && w.finish(resp.trailers());  // a failed body gets no last chunk: the client sees it cut short
    co_return ok && framing != stream_framing::close;
  };

  while (open) {
    bool completed_any = false;
    bool first = true;  // no request of this batch seen yet (server_metrics::sample_start)
    if (sniff) {
      const std::string_view preface = h2_preface;
      const std::size_t n = std::min(in.size(), preface.size());
      if (std::string_view(in.data(), n) != preface.substr(0, n)) {
        sniff = false;  // HTTP/1.1
        if (protocols == cleartext::h2c) {
          write_error(out, 505, "this port speaks HTTP/2 only (prior knowledge: start with the HTTP/2 preface)",
                      m_opts.server_name);
          tally.note(stats.unmatched_route, 505);
          open = false;
        }
      } else if (n == preface.size()) {
        std::span<const std::byte> got(reinterpret_cast<const std::byte*>(in.data()), in.size());
        auto run = run_h2(io, entry, got);
        co_await std::move(run);
        co_return;
      }
    }
    for (; !sniff && open;) {
      if (streams && !parser.head_complete() && parser.parse_head(in.data(), in.size()) == parse_status::complete) {
        request& hreq = parser.get();
        route_match pre = m_router.match(hreq.method, normalize_path(hreq.path, path_scratch));
        if (pre.fn != nullptr && pre.options->stream_body) {
          entry.set(detail::conn_state::busy, detail::coarse_now_ms());
          const route_options& ro = *pre.options;
          const std::uint64_t limit = ro.max_body != 0 ? ro.max_body : limits.max_body;
          write_options wo{hreq.keep_alive, hreq.version_minor, hreq.method == "HEAD"};
          // The head stays at the buffer's front, one window of room behind it, for the
          // handler's whole run (its views point into it).
          if ((parser.has_content_length() && parser.content_length() > limit) ||
              !in.pin(parser.head_size(), ro.window + limits.max_chunk_line + 64)) {
            write_error(out, 413, "request body too large", m_opts.server_name, wo.head);
            tally.note(pre.route, 413);
            open = false;
            break;
          }
          parser.refresh_views(in.data());
          request& req = parser.get();
          // The path moved with the buffer: match again for parameters that view it.
          route_match m = m_router.match(req.method, normalize_path(req.path, path_scratch));
          parser.start_streaming(limit);
          const std::int64_t t0 = detail::server_metrics::sample_start(first);
          conn_body<Io> body(io, in, parser, out, entry, ro.window, multishot, m_opts.direct_send, tally);
          req.m_body.reset_streamed(&body, parser.has_content_length()
                                               ? std::optional<std::uint64_t>(parser.content_length())
                                               : std::nullopt);
          auto run = call(m, req);
          std::optional<response> resp = co_await std::move(run);
          req.m_body.reset_buffered({}, std::nullopt);  // body dies with this block
          // A body not read to its end cannot be told apart from a next request: close.
          if (!body.complete())
            wo.keep_alive = false;
          if (resp) {
            refuse_upgrade<Io>(*resp);
            write_response(out, *resp, wo, m_opts.server_name);
            tally.note(m.route, resp->status);
            stats.sample_end(t0);
            if (const stream_framing f = framing_of(*resp, wo); f != stream_framing::none) {
              tally.flush();  // the producer sends the head itself
              auto body_out = produce(*resp, f);
              bool completed = co_await std::move(body_out);
              if (!completed)
                open = false;
            }
            if (resp->close)
              open = false;
            else if (resp->upgrade() && resp->status == 101 && wo.keep_alive) {
              upgraded = std::move(resp->upgrade());
              upgraded_tls = std::move(resp->upgrade_tls());
            }
          } else {
            write_error(out, 500, "handler failed", m_opts.server_name, wo.head);
            tally.note(m.route, 500);
            open = false;
          }
          completed_any = true;
          if (!wo.keep_alive)
            open = false;
          if (!open)
            break;
          in.consume(parser.consumed());
          parser.reset();
          if (upgraded)
            break;
          continue;
        }
      }
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
        tally.note(stats.unmatched_route, parser.error_status());
        open = false;
        linger = true;
        break;
      }
      entry.state.store(detail::conn_state::busy, std::memory_order_relaxed);
      request& req = parser.get();
      const std::int64_t t0 = detail::server_metrics::sample_start(first);
      write_options wo{req.keep_alive, req.version_minor, req.method == "HEAD"};
      const std::string_view path = normalize_path(req.path, path_scratch);
      route_match m = m_router.match(req.method, path);
      if (!m.fn) [[unlikely]] {
        if (const handler* other = m_router.otherwise_for(req, &m.options); other != nullptr) {
          m.fn = other;
          m.route = static_cast<unsigned>(stats.unmatched_route);
        }
      }
      if (m.fn) {
        // Inline rather than through `call`: no extra coroutine frame per request on the
        // hot path.
        req.m_params = &m.params;  // lifetime: m outlives the handler's task (this block)
        bool threw = false;
        try {
          task<response> t = (*m.fn)(req, m.params);
          // lifetime: t owns the handler's frame until the end of this block.
          response resp = co_await await_under(t, m_stop_ctx);
          refuse_upgrade<Io>(resp);
          write_response(out, resp, wo, m_opts.server_name);
          tally.note(m.route, resp.status);
          stats.sample_end(t0);
          if (const stream_framing f = framing_of(resp, wo); f != stream_framing::none) [[unlikely]] {
            tally.flush();  // the producer sends the head itself
            auto body_out = produce(resp, f);
            bool completed = co_await std::move(body_out);
            if (!completed)
              open = false;
          }
          if (resp.close)
            open = false;
          else if (resp.upgrade() && resp.status == 101) {
            upgraded = std::move(resp.upgrade());
            upgraded_tls = std::move(resp.upgrade_tls());
          }
        } catch (const std::exception&) {
          threw = true;
        }
        req.m_params = nullptr;
        if (threw) {
          write_error(out, 500, "handler failed", m_opts.server_name, wo.head);
          tally.note(m.route, 500);
          open = false;
        }
      } else {
        const response answer = detail::unrouted(m_router, req, path, m.status);
        write_response(out, answer, wo, m_opts.server_name);
        tally.note(stats.unmatched_route, answer.status);
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
      // does not fit goes through the ring's send, which waits for room (the send timeout
      // applies).
      tally.flush();  // counted before the client can see the answers
      auto tx = io.send(out, entry, m_opts.direct_send);
      bool sent = co_await std::move(tx);
      if (!sent)
        break;
      tally.sent(out.size());
      out.clear();
    }
    if (upgraded) {
      // The connection is the new protocol's now: it runs under the stop token like a
      // handler (busy: no HTTP timeout applies; at stop it has stop_grace, then its
      // socket is shut down), and the connection closes when it returns.
      entry.set(detail::conn_state::busy, detail::coarse_now_ms());
      std::span<const std::byte> leftover(reinterpret_cast<const std::byte*>(in.data()), in.size());
      try {
        task<void> t = [&] {
          if constexpr (Io::tls)
            return upgraded_tls(io.t, leftover);
          else
            return upgraded(io.socket(), leftover);
        }();
        co_await await_under(t, m_stop_ctx);
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
    if (was_empty && (multishot || Io::tls))
      in.release();  // an idle connection holds no receive buffer (conn_buffer.hpp)
    auto more = read_into(io, in, tally, multishot, false);
    bool got = co_await std::move(more);
    if (!got)
      break;
    if (was_empty && entry.state.load(std::memory_order_relaxed) == detail::conn_state::idle)
      entry.set(detail::conn_state::reading, detail::coarse_now_ms());
  }
  if (linger) {
    // Half-close, then drain what the client still sends until it closes (bounded by the
    // header timeout through the sweeper), so the last answer is not lost to a reset.
    auto sh = io.shutdown();
    co_await std::move(sh);
    entry.set(detail::conn_state::reading, detail::coarse_now_ms());
    for (std::size_t drained = 0; drained < (1u << 20);) {
      std::size_t before = in.size();
      auto more = read_into(io, in, tally, multishot, false);
      bool got = co_await std::move(more);
      if (!got)
        break;
      drained += in.size() - before;
      in.consume(in.size());
    }
  }
}

}  // namespace saturn::http
