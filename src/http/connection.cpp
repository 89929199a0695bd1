// One connection's protocol:
//
//   loop: parse every complete request in the buffer → run its handler (a coroutine,
//         awaited in order) → serialize its response into `out`;
//         send `out` in one send (a pipelined batch is coalesced into one write);
//         compact or grow the buffer; mark idle / reading for the sweeper; recv.
//
// Requests are handled one at a time, so the request's views into the buffer stay valid
// while its handler runs, and responses leave in request order. An error answer (400,
// 413, 431, 501, 505) is followed by a half-close and a short drain, so the client reads
// the answer instead of a reset.
#include <saturn/http/server.hpp>

#include "http/connection_registry.hpp"

#include <cstring>
#include <exception>

namespace saturn::http {

namespace {

std::span<std::byte> writable(char* p, std::size_t n) { return {reinterpret_cast<std::byte*>(p), n}; }
std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

task<void> server::serve_connection(net::tcp_stream s) {
  detail::conn_entry entry;
  entry.fd = s.fd();
  entry.set(detail::conn_state::idle, detail::coarse_now_ms());
  m_registry->add(&entry);

  const parser_limits& limits = m_opts.limits;
  const std::size_t max_buffer = limits.max_head + 2 * limits.max_body + 32 * 1024;
  std::size_t cap = m_opts.read_buffer;
  std::unique_ptr<char[]> buf(new char[cap]);
  std::size_t start = 0, end = 0;
  request_parser parser(limits);
  std::string out;
  bool open = true, failed = false;

  while (open) {
    bool completed_any = false;
    for (;;) {
      parse_status st = parser.parse(buf.get() + start, end - start);
      if (st == parse_status::incomplete)
        break;
      if (st == parse_status::error) {
        write_error(out, parser.error_status(), parser.error_reason(), m_opts.server_name);
        open = false;
        failed = true;
        break;
      }
      entry.state.store(detail::conn_state::busy, std::memory_order_relaxed);
      const request& req = parser.get();
      write_options wo{req.keep_alive, req.version_minor, req.method == "HEAD"};
      route_match m = m_router.match(req.method, req.path);
      if (m.fn) {
        bool threw = false;
        try {
          task<response> t = (*m.fn)(req, m.params);
          response resp = co_await std::move(t);
          write_response(out, resp, wo, m_opts.server_name);
          if (resp.close)
            open = false;
        } catch (const std::exception&) {
          threw = true;
        }
        if (threw) {
          write_error(out, 500, "handler failed", m_opts.server_name);
          open = false;
        }
      } else {
        response resp(m.status, "text/plain", std::string(reason_phrase(m.status)));
        write_response(out, resp, wo, m_opts.server_name);
      }
      completed_any = true;
      if (!wo.keep_alive)
        open = false;
      start += parser.consumed();
      parser.reset();
      if (!open)
        break;
    }
    if (!out.empty()) {
      auto send = s.send(bytes_of(out));
      auto sent = co_await send;
      out.clear();
      if (!sent)
        break;
    }
    if (!open)
      break;
    if (start == end) {
      start = end = 0;
    } else if (end == cap) {
      if (start > 0) {
        std::memmove(buf.get(), buf.get() + start, end - start);
        end -= start;
        start = 0;
      } else {
        if (cap >= max_buffer)
          break;  // unreachable: the parser fails before (its limits are below max_buffer)
        std::size_t ncap = std::min(cap * 2, max_buffer);
        std::unique_ptr<char[]> nbuf(new char[ncap]);
        std::memcpy(nbuf.get(), buf.get(), end);
        buf = std::move(nbuf);
        cap = ncap;
      }
    }
    std::int64_t now = detail::coarse_now_ms();
    if (start == end)
      entry.set(detail::conn_state::idle, now);
    else if (completed_any || entry.state.load(std::memory_order_relaxed) != detail::conn_state::reading)
      entry.set(detail::conn_state::reading, now);  // a partial request begins now
    if (m_stopping.load(std::memory_order_acquire))
      break;
    auto recv = s.recv(writable(buf.get() + end, cap - end));
    auto got = co_await recv;
    if (!got || *got == 0)
      break;
    if (start == end && entry.state.load(std::memory_order_relaxed) == detail::conn_state::idle)
      entry.set(detail::conn_state::reading, detail::coarse_now_ms());
    end += *got;
  }
  if (failed) {
    // Half-close, then drain what the client still sends (bounded by the header timeout
    // through the sweeper), so the answer is not lost to a reset.
    auto sh = s.shutdown(SHUT_WR);
    (void)co_await sh;
    entry.set(detail::conn_state::reading, detail::coarse_now_ms());
    for (std::size_t drained = 0; drained < (1u << 20);) {
      auto recv = s.recv(writable(buf.get(), cap));
      auto got = co_await recv;
      if (!got || *got == 0)
        break;
      drained += *got;
    }
  }
  m_registry->remove(&entry);
  auto cl = s.close();
  (void)co_await cl;
  m_slots.release();
}

}  // namespace saturn::http
