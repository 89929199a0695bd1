// One HTTP/2 connection (server::run_h2): a connection task that alone drives the
// nghttp2 session (h2_session.hpp), a receive task, and one task per stream's handler,
// all in one task group, so the connection cannot end while any of them runs.
//
//   receive task:    recv into its buffer (over TLS: wait for ciphertext) → mark it full,
//                    wake the connection task → wait until the buffer was fed;
//   connection task: wake → feed the received bytes to nghttp2 (their frames open
//                    streams and complete requests) → start the handler of each request
//                    that is complete → submit the answers handlers posted → send what
//                    nghttp2 produced (one send for everything pending: many streams'
//                    answers leave together) → wait for the next wake;
//   stream tasks:    run the handler under the stream's own stop token (a client's
//                    RST_STREAM, the server's stop and the connection's end cancel it),
//                    then post the answer (h2_stream.cpp).
//
// Waiting for bytes and for handlers at once is why the receive is its own task; it only
// ever touches the socket (over TLS, the stream's ciphertext buffer: wait_readable), while
// decryption, nghttp2 and sends all happen on the connection task, so OpenSSL's and
// nghttp2's state each have one user at a time.
//
// The sweeper sees a connection with a handler running as busy, one with streams open and
// none running as reading (the header timeout: a client that opens a stream and never
// finishes it). One with no stream keeps the idle timeout itself, so that it can send
// GOAWAY before it closes (the sweeper sees it busy). At the server's stop the
// connection sends GOAWAY with the last stream it took, cancels the handlers in flight
// (their answers still go out), and closes once every stream is done — or when stop_grace
// has passed (the sweeper shuts the socket down). A drain (server::drain, the graceful
// stop) sends the GOAWAY without cancelling anything.
#include <saturn/http/server.hpp>
#include <saturn/detail/atomic.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include "http/conn_io.hpp"
#include "http/connection_registry.hpp"
#include "http/h2_session.hpp"
#include "http/server_metrics.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stop_token>
#include <string>

namespace saturn::http {

namespace {

/// The receive task's buffer, handed to the connection task and back.
struct h2_rx {
  explicit h2_rx(std::size_t size) : buf(new std::byte[size]), cap(size) {}
  std::unique_ptr<std::byte[]> buf;
  std::size_t cap;
  std::size_t n = 0;  // bytes received (plain), or 1 = ciphertext is there (TLS); 0: the end
  saturn::detail::atomic<bool> full{false};  // the connection task owns buf and n
  event go;                                  // set when the receive task may receive again
};

/// What nghttp2 produced for one send, gathered from its frames: one buffer per worker
/// thread, not one per connection. A connection's batch of answers reaches 64 KiB (32
/// streams of json are ~115 KiB), and a string kept per connection held that capacity for
/// the connection's life: json-h2c (1,024 connections) peaked at 340-355 MiB that way and
/// at 267-279 MiB with this buffer, with 1.6 us less system CPU per request (5 rounds
/// each). send_scratch takes what a send leaves behind into the connection's own buffer
/// before it waits, so the worker's other connections may refill this one then.
std::string& h2_batch() {
  thread_local std::string batch;
  return batch;
}

/// Waits for `wake` in a task of its own, so with_timeout can bound it.
task<bool> wait_wake(event& wake) {
  auto w = co_await wake.wait();
  co_return static_cast<bool>(w);
}

/// Hands `n` bytes in rx.buf (0: the end) to the connection task and waits until they were
/// fed. False when the receive task must stop.
task<bool> h2_hand_over(h2_rx& rx, detail::h2_session& s, std::size_t n) {
  rx.n = n;
  // ordering: release publishes buf and n to the connection task's acquire load.
  rx.full.store(true, std::memory_order_release);
  s.wake.set();
  if (n == 0)
    co_return false;
  auto w = co_await rx.go.wait();
  if (!w)
    co_return false;
  rx.go.reset();
  co_return true;
}

/// `multishot`: the connection read its first bytes (the preface) through the stream's
/// multishot receive, which stays armed: every later byte must come from it too. A recv of
/// its own would race it for the socket's bytes, and what the multishot receive took (or
/// had queued already) would never reach nghttp2 — frames cut apart (found by the
/// simulator's h2 scenario: FRAME_SIZE_ERROR, and transfers stalled on a lost
/// WINDOW_UPDATE).
template <class Io>
task<void> h2_receive(Io& io, h2_rx& rx, detail::h2_session& s, bool multishot) {
  for (;;) {
    std::size_t n = 0;
    if constexpr (Io::tls) {
      auto wait = io.t.wait_readable();
      auto ready = co_await std::move(wait);
      n = ready ? 1 : 0;
    } else {
      if (multishot) {
        auto rv = io.s.receive();
        auto got = co_await rv;
        if (!got || got->empty()) {
          (void)co_await h2_hand_over(rx, s, 0);
          co_return;
        }
        // The chunk stays valid until the next receive(): handed over a buffer at a time.
        for (std::size_t at = 0; at < got->size();) {
          const std::size_t k = std::min(rx.cap, got->size() - at);
          std::memcpy(rx.buf.get(), got->data() + at, k);
          at += k;
          auto more = h2_hand_over(rx, s, k);
          if (!co_await std::move(more))
            co_return;
        }
        continue;
      }
      auto rv = io.recv(std::span<std::byte>(rx.buf.get(), rx.cap));
      auto got = co_await rv;
      n = got ? *got : 0;
    }
    auto more = h2_hand_over(rx, s, n);
    if (!co_await std::move(more))
      co_return;
  }
}

}  // namespace

template <class Io>
task<void> server::run_h2(Io& io, detail::conn_entry& entry, std::span<const std::byte> received) {
  detail::server_metrics& stats = *m_metrics;
  detail::h2_session sess(m_router, m_opts.limits, m_opts.h2, m_opts.server_name, stats, m_stop_ctx);
  if (!sess.ok())
    co_return;
  h2_rx rx(std::max<std::size_t>(m_opts.read_buffer, 16 * 1024));
  std::unique_ptr<std::byte[]> plain;  // TLS: decrypted bytes
  if constexpr (Io::tls)
    plain.reset(new std::byte[16 * 1024]);
  saturn::detail::atomic<bool> drain_seen{false}, stop_seen{false};
  // At the server's drain (or stop): GOAWAY, then the streams in flight finish (within
  // stop_grace: the connection counts as busy from here, so the sweeper grants it). At
  // its stop the handlers still running are cancelled too (they may still answer).
  auto on_drain_fn = [&]() noexcept {
    entry.set(detail::conn_state::busy, detail::coarse_now_ms());
    // ordering: release pairs with the connection task's acquire; the wake orders too.
    drain_seen.store(true, std::memory_order_release);
    sess.wake.set();
  };
  auto on_stop_fn = [&]() noexcept {
    // ordering: as on_drain_fn.
    stop_seen.store(true, std::memory_order_release);
    sess.wake.set();
  };
  std::stop_callback<decltype(on_drain_fn)> on_drain(m_drain.get_token(), on_drain_fn);
  std::stop_callback<decltype(on_stop_fn)> on_stop(m_stop_ctx.token, on_stop_fn);
  bool fine = sess.receive(received);  // the preface (and what came with it), if sniffed
  bool peer_gone = false, broken = false;

  auto body = [&](task_group& g) -> task<void> {
    g.spawn(h2_receive(io, rx, sess, !Io::tls && m_opts.multishot_receive));
    std::string out;  // what a send left behind (the batch itself is the worker's: h2_batch)
    bool stop_sent = false, cancelled = false;
    detail::conn_state shown = detail::conn_state::idle;
    entry.set(shown, detail::coarse_now_ms());
    for (;;) {
      // Woken while handlers run: the rest of them go first. A batch of requests starts
      // many handlers on this worker, and the scheduler runs the newest local work first:
      // the connection, woken by the first answer, would send it alone and wait again —
      // one send (and one nghttp2 pass) per answer. Behind a yield the others finish, and
      // their answers leave together.
      if (sess.running() > 0)
        co_await saturn::yield();
      sess.wake.reset();
      if (!stop_sent && drain_seen.load(std::memory_order_acquire)) {
        sess.goaway();
        stop_sent = true;
      }
      if (!cancelled && stop_seen.load(std::memory_order_acquire)) {
        sess.goaway();
        sess.cancel_running();
        stop_sent = cancelled = true;
      }
      // ordering: acquire pairs with the receive task's release (buf and n).
      if (fine && rx.full.load(std::memory_order_acquire)) {
        rx.full.store(false, std::memory_order_relaxed);
        if (rx.n == 0) {
          peer_gone = true;
        } else if constexpr (Io::tls) {
          auto rv = io.t.read(std::span<std::byte>(plain.get(), 16 * 1024));
          auto got = co_await std::move(rv);
          if (!got || *got == 0) {
            peer_gone = true;
          } else {
            detail::server_metrics::add(*stats.bytes_received, *got);
            fine = sess.receive(std::span<const std::byte>(plain.get(), *got));
          }
        } else {
          detail::server_metrics::add(*stats.bytes_received, rx.n);
          fine = sess.receive(std::span<const std::byte>(rx.buf.get(), rx.n));
        }
        if (!peer_gone)
          rx.go.set();
      }
      sess.drain_events();
      for (detail::h2_stream* st : sess.ready())
        g.spawn(detail::run_h2_stream(sess, *st));
      sess.ready().clear();
      // Everything nghttp2 has to say, in sends of up to 64 KiB, gathered in the worker's
      // batch (h2_batch).
      for (;;) {
        std::string& batch = h2_batch();
        batch.clear();
        if (!sess.produce(batch, 64 * 1024))
          fine = false;
        if (batch.empty())
          break;
        const std::size_t size = batch.size();
        auto tx = io.send_scratch(batch, out, entry, m_opts.direct_send);
        const bool sent = co_await std::move(tx);
        if (!sent) {
          broken = true;
          break;
        }
        detail::server_metrics::add(*stats.bytes_sent, size);
        if (!fine)
          break;
      }
      if (broken || peer_gone || !fine || !sess.alive())
        break;
      if (stop_sent && sess.active() == 0)
        break;
      // With no stream the connection keeps its own idle timeout (so it can say GOAWAY
      // first): the sweeper sees it busy then, and only its stop applies.
      const bool idle = sess.active() == 0;
      const detail::conn_state now_state = sess.running() > 0 || idle ? detail::conn_state::busy
                                                                     : detail::conn_state::reading;
      if (now_state != shown || entry.state.load(std::memory_order_relaxed) == detail::conn_state::sending) {
        shown = now_state;
        entry.set(shown, detail::coarse_now_ms());
      }
      if (idle && !stop_sent) {
        auto waited = co_await with_timeout(m_opts.idle_timeout, wait_wake(sess.wake));
        if (!waited && waited.err() == std::errc::timed_out) {
          sess.goaway();  // GOAWAY(NO_ERROR), then the loop ends the connection
          stop_sent = true;
        }
        continue;
      }
      auto w = co_await sess.wake.wait();
      (void)w;
    }
    // The connection ends: every handler is cancelled (the group waits for them all
    // before run() returns).
    sess.cancel_all();
    if (!peer_gone && !broken) {
      // After the last frames (a GOAWAY, usually): a FIN (and close_notify over TLS),
      // then what the client still sends is read and dropped until it closes, so its
      // kernel does not discard our last frames on a reset. The header timeout bounds
      // the wait (the sweeper), and so does a megabyte.
      auto sh = io.shutdown();
      co_await std::move(sh);
      entry.set(detail::conn_state::reading, detail::coarse_now_ms());
      for (std::size_t drained = 0; drained < (1u << 20);) {
        sess.wake.reset();
        // ordering: acquire pairs with the receive task's release.
        if (rx.full.load(std::memory_order_acquire)) {
          rx.full.store(false, std::memory_order_relaxed);
          if (rx.n == 0)
            break;
          std::size_t n = rx.n;
          if constexpr (Io::tls) {
            auto rv = io.t.read(std::span<std::byte>(plain.get(), 16 * 1024));
            auto got = co_await std::move(rv);
            if (!got || *got == 0)
              break;
            n = *got;
          }
          drained += n;
          rx.go.set();
          continue;
        }
        auto w = co_await sess.wake.wait();
        (void)w;
      }
    }
    g.cancel();  // the receive task, if it still waits
  };
  co_await task_group::run(std::move(body));
}

template task<void> server::run_h2<detail::plain_io>(detail::plain_io&, detail::conn_entry&,
                                                     std::span<const std::byte>);
template task<void> server::run_h2<detail::tls_io>(detail::tls_io&, detail::conn_entry&,
                                                   std::span<const std::byte>);

}  // namespace saturn::http
