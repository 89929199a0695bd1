// grpc::channel: a gRPC client over one HTTP/2 connection per target (channel.hpp).
//
// The connection is a task (client_conn::run) that alone drives nghttp2's client session,
// as the server's connection task does (src/http/h2_connection.cpp): a receive task hands
// it what the socket received, calls post their requests and cancellations to it under a
// mutex and wake it, and it sends everything nghttp2 has to say in one send. A call waits
// on its own event for its replies and its end; the connection appends the DATA bytes to
// the call and the call cuts messages out of them in its own task.
//
// The socket is TCP or TLS (client_transport.hpp): over TLS the receive task only waits
// for ciphertext, and the connection task decrypts, so OpenSSL has one user at a time.
//
// Flow control is the caller's: nghttp2 sends no WINDOW_UPDATE by itself. A call whose
// stream is open hands back (consume) the bytes it has taken and cut into messages; the
// connection task then tells nghttp2 (nghttp2_session_consume), which reopens the
// stream's and the connection's windows. A slow reader therefore holds the server back:
// what waits for it is at most one stream window. The connection task counts each call's
// bytes (received, returned) and itself gives back the rest of a call that ended — its
// stream closed (only the connection's window is left to reopen: no wake per finished
// call) or its caller gone (cancelled, deadline; what still arrives is given back as it
// comes) — so the shared connection window never leaks shut.
#include <saturn/grpc/channel.hpp>

#include <saturn/detail/atomic.hpp>
#include <saturn/sync/event.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/time.hpp>

#include "grpc/client_transport.hpp"
#include "grpc/wire.hpp"

#include <nghttp2/nghttp2.h>

#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <mutex>

namespace saturn::grpc {

namespace detail {

/// One call, shared by its caller and the connection task.
struct client_call {
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;  // metadata and grpc-timeout
  std::string body;                                          // the framed requests
  std::size_t body_off = 0;                                  // connection task only
  std::int32_t id = -1;                                      // connection task only
  // Written by the connection task, read by the caller (under mu).
  std::mutex mu;
  event ev;  // set on new bytes and at the end
  std::string rx;
  bool done = false;
  std::uint32_t reset_code = 0;  // RST_STREAM's code (0: ended normally)
  int http_status = 0;
  int grpc_status = -1;
  std::string grpc_message;
  std::vector<std::pair<std::string, std::string>> trailers;
  std::string failure;     // the connection failed: why
  bool abandoned = false;  // the caller left: what arrives is given back at once
  // The window's account (connection task only): DATA bytes received, and given back.
  std::size_t received = 0;
  std::size_t returned = 0;
};

/// One connection (see the file comment).
struct client_conn {
  client_conn(std::string t, channel_options o) : target(std::move(t)), opts(o) {}
  client_conn(const client_conn&) = delete;
  client_conn& operator=(const client_conn&) = delete;
  // lifetime: the last owner is the channel or the connection task's frame — also when a
  // scheduler destroys that frame suspended (its pool shutting down): the session goes too.
  ~client_conn() {
    if (session != nullptr)
      nghttp2_session_del(session);
  }
  std::string target;
  channel_options opts;
  // Shared with callers (under mu).
  std::mutex mu;
  std::vector<std::shared_ptr<client_call>> to_submit;
  std::vector<std::shared_ptr<client_call>> to_cancel;
  std::vector<std::pair<std::shared_ptr<client_call>, std::size_t>> to_consume;  // bytes callers took
  bool dead = false;     // no new calls: make another connection
  std::string dead_why;  // ... and why (what fail_all said)
  bool closing = false;  // the channel is gone
  event wake;
  // The connection task's own.
  nghttp2_session* session = nullptr;
  std::map<std::int32_t, std::shared_ptr<client_call>> streams;
  std::vector<std::pair<std::int32_t, std::size_t>> given_back;  // to consume: nobody will take them

  /// Gives back the bytes of `c` not given back yet (a stream that closed: the
  /// connection's window only).
  void give_back_rest(client_call& c) {
    if (c.received > c.returned && c.id > 0)
      given_back.emplace_back(c.id, c.received - c.returned);
    c.returned = c.received;
  }

  /// Queues `c` (false if this connection is dead: the caller makes another).
  bool submit(std::shared_ptr<client_call> c) {
    {
      std::lock_guard lock(mu);
      if (dead)
        return false;
      to_submit.push_back(std::move(c));
    }
    wake.set();
    return true;
  }
  /// Resets `c` (its caller left) and gives its window back.
  void cancel(std::shared_ptr<client_call> c) {
    {
      std::lock_guard lock(mu);
      to_cancel.push_back(std::move(c));
    }
    wake.set();
  }
  /// The caller of `c` has taken `n` bytes: its window may reopen by as much.
  void consume(std::shared_ptr<client_call> c, std::size_t n) {
    if (n == 0)
      return;
    {
      std::lock_guard lock(mu);
      to_consume.emplace_back(std::move(c), n);
    }
    wake.set();
  }
  bool is_dead() {
    std::lock_guard lock(mu);
    return dead;
  }
  std::string why_dead() {
    std::lock_guard lock(mu);
    return dead_why;
  }
  /// Ends every call (queued or open) with `why` and refuses new ones.
  void fail_all(const std::string& why) {
    std::vector<std::shared_ptr<client_call>> calls;
    {
      std::lock_guard lock(mu);
      dead = true;
      dead_why = why;
      calls.swap(to_submit);
    }
    for (auto& [id, c] : streams)
      calls.push_back(c);
    streams.clear();
    for (auto& c : calls) {
      {
        std::lock_guard lock(c->mu);
        if (!c->done) {
          c->done = true;
          c->failure = why;
        }
      }
      c->ev.set();
    }
  }
};

namespace {

client_conn& self(void* u) noexcept { return *static_cast<client_conn*>(u); }

client_call* call_of(nghttp2_session* s, std::int32_t id) noexcept {
  return static_cast<client_call*>(nghttp2_session_get_stream_user_data(s, id));
}

int on_header(nghttp2_session* s, const nghttp2_frame* f, const std::uint8_t* name, std::size_t namelen,
              const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void*) {
  if (f->hd.type != NGHTTP2_HEADERS)
    return 0;
  client_call* c = call_of(s, f->hd.stream_id);
  if (c == nullptr)
    return 0;
  const std::string_view n(reinterpret_cast<const char*>(name), namelen);
  const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  std::lock_guard lock(c->mu);
  if (n == ":status") {
    std::from_chars(v.data(), v.data() + v.size(), c->http_status);
  } else if (n == "grpc-status") {
    std::from_chars(v.data(), v.data() + v.size(), c->grpc_status);
  } else if (n == "grpc-message") {
    c->grpc_message = percent_decode(v);
  } else if (f->headers.cat == NGHTTP2_HCAT_HEADERS || (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    c->trailers.emplace_back(std::string(n), std::string(v));  // trailing metadata (or Trailers-Only)
  }
  return 0;
}

int on_data(nghttp2_session* s, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len, void* u) {
  client_call* c = call_of(s, id);
  if (c == nullptr) {
    self(u).given_back.emplace_back(id, len);
    return 0;
  }
  c->received += len;
  {
    std::lock_guard lock(c->mu);
    if (c->abandoned) {
      self(u).give_back_rest(*c);
      return 0;
    }
    c->rx.append(reinterpret_cast<const char*>(data), len);
  }
  c->ev.set();
  return 0;
}

int on_close(nghttp2_session* s, std::int32_t id, std::uint32_t code, void* u) {
  client_conn& conn = self(u);
  auto it = conn.streams.find(id);
  if (it == conn.streams.end())
    return 0;
  std::shared_ptr<client_call> c = std::move(it->second);
  conn.streams.erase(it);
  conn.give_back_rest(*c);  // the caller gives back nothing once it sees the call done
  nghttp2_session_set_stream_user_data(s, id, nullptr);
  {
    std::lock_guard lock(c->mu);
    c->done = true;
    c->reset_code = code;
  }
  c->ev.set();
  return 0;
}

ssize_t read_body(nghttp2_session* s, std::int32_t id, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                  nghttp2_data_source*, void*) {
  client_call* c = call_of(s, id);
  if (c == nullptr)
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  const std::size_t n = std::min(length, c->body.size() - c->body_off);
  std::memcpy(buf, c->body.data() + c->body_off, n);
  c->body_off += n;
  if (c->body_off == c->body.size())
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

nghttp2_nv nv(std::string_view name, std::string_view value) noexcept {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-const-cast): nghttp2 only reads them
  return nghttp2_nv{const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
                    const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NONE};
  // NOLINTEND(cppcoreguidelines-pro-type-const-cast)
}

void submit_call(client_conn& conn, const std::shared_ptr<client_call>& c, bool secure) {
  std::vector<nghttp2_nv> nva{
      nv(":method", "POST"),          nv(":scheme", secure ? "https" : "http"), nv(":authority", conn.target),
      nv(":path", c->path),           nv("content-type", "application/grpc"),   nv("te", "trailers"),
      nv("user-agent", "saturn-grpc")};
  for (const auto& [k, v] : c->headers)
    nva.push_back(nv(k, v));
  nghttp2_data_provider prd{};
  prd.read_callback = read_body;
  const std::int32_t id = nghttp2_submit_request(conn.session, nullptr, nva.data(), nva.size(), &prd, c.get());
  if (id < 0) {
    {
      std::lock_guard lock(c->mu);
      c->done = true;
      c->failure = std::string("the request could not be submitted: ") + nghttp2_strerror(id);
    }
    c->ev.set();
    return;
  }
  c->id = id;
  conn.streams.emplace(id, c);
}

/// The receive side, handed to the connection task (as the server's h2_receive).
struct rx_slot {
  static constexpr std::size_t k_size = 16 * 1024;
  std::unique_ptr<std::byte[]> buf{new std::byte[k_size]};
  // Bytes received (plain), or 1 = ciphertext is there (TLS); 0: the end.
  std::size_t n = 0;
  saturn::detail::atomic<bool> full{false};  // the connection task owns buf and n
  event go;
};

task<void> receive(client_transport& io, rx_slot& rx, event& wake) {
  for (;;) {
    auto w = io.wait(std::span<std::byte>(rx.buf.get(), rx_slot::k_size));
    rx.n = co_await std::move(w);
    // ordering: release publishes buf and n to the connection task.
    rx.full.store(true, std::memory_order_release);
    wake.set();
    if (rx.n == 0)
      co_return;
    auto g = co_await rx.go.wait();
    if (!g)
      co_return;
    rx.go.reset();
  }
}

/// Gives back to nghttp2's windows the bytes callers took (or nobody will).
void settle_windows(client_conn& conn, std::vector<std::pair<std::shared_ptr<client_call>, std::size_t>>& consumed) {
  for (auto& [c, n] : consumed) {
    // Never more than was received and not yet given back (the call may have ended and
    // been settled since its caller took the bytes).
    const std::size_t k = std::min(n, c->received - c->returned);
    c->returned += k;
    if (k > 0 && c->id > 0)
      nghttp2_session_consume(conn.session, c->id, k);
  }
  consumed.clear();
  for (auto [id, n] : conn.given_back)
    nghttp2_session_consume(conn.session, id, n);
  conn.given_back.clear();
}

}  // namespace

/// The connection task.
task<void> run_conn(std::shared_ptr<client_conn> conn) {
  auto opening = client_transport::open(conn->target, conn->opts);
  client_transport::opened made = co_await std::move(opening);
  if (!made.io) {
    conn->fail_all(made.why);
    co_return;
  }
  client_transport& io = *made.io;
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  nghttp2_option_set_no_auto_window_update(opt, 1);
  const int created = nghttp2_session_client_new2(&conn->session, cbs, conn.get(), opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cbs);
  if (created != 0) {
    conn->fail_all("nghttp2 could not make a session");
    auto cl = io.close();
    co_await std::move(cl);
    co_return;
  }
  const nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
       std::clamp<std::uint32_t>(conn->opts.stream_window, 16 * 1024, NGHTTP2_MAX_WINDOW_SIZE)}};
  nghttp2_submit_settings(conn->session, NGHTTP2_FLAG_NONE, iv, 2);
  if (conn->opts.connection_window > NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE)
    nghttp2_session_set_local_window_size(
        conn->session, NGHTTP2_FLAG_NONE, 0,
        std::min<std::uint32_t>(conn->opts.connection_window, NGHTTP2_MAX_WINDOW_SIZE));
  rx_slot rx;
  std::string why = "the connection to " + conn->target + " closed";
  const bool secure = io.secure();
  auto body = [&](task_group& g) -> task<void> {
    g.spawn(receive(io, rx, conn->wake));
    std::string out;
    std::vector<std::pair<std::shared_ptr<client_call>, std::size_t>> consumed;
    for (;;) {
      conn->wake.reset();
      // ordering: acquire pairs with the receive task's release.
      if (rx.full.load(std::memory_order_acquire)) {
        rx.full.store(false, std::memory_order_relaxed);
        if (rx.n == 0)
          break;
        auto tk = io.take(std::span<std::byte>(rx.buf.get(), rx_slot::k_size), rx.n);
        auto got = co_await std::move(tk);
        if (!got || *got == 0) {
          if (!got)
            why = "receive from " + conn->target + ": " + got.err().message();
          break;
        }
        if (nghttp2_session_mem_recv(conn->session, reinterpret_cast<const std::uint8_t*>(rx.buf.get()), *got) < 0) {
          why = "the server broke the HTTP/2 protocol";
          break;
        }
        rx.go.set();
      }
      std::vector<std::shared_ptr<client_call>> subs;
      std::vector<std::shared_ptr<client_call>> cancels;
      bool closing = false;
      {
        std::lock_guard lock(conn->mu);
        subs.swap(conn->to_submit);
        cancels.swap(conn->to_cancel);
        consumed.swap(conn->to_consume);
        closing = conn->closing;
      }
      for (auto& c : subs)
        submit_call(*conn, c, secure);
      settle_windows(*conn, consumed);
      for (auto& c : cancels) {
        {
          std::lock_guard lock(c->mu);
          c->abandoned = true;
          c->rx.clear();
        }
        conn->give_back_rest(*c);
        if (c->id > 0 && conn->streams.count(c->id) != 0)
          nghttp2_submit_rst_stream(conn->session, NGHTTP2_FLAG_NONE, c->id, NGHTTP2_CANCEL);
      }
      settle_windows(*conn, consumed);
      for (;;) {
        const std::uint8_t* p = nullptr;
        const ssize_t n = nghttp2_session_mem_send(conn->session, &p);
        if (n <= 0)
          break;
        out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
      }
      if (!out.empty()) {
        auto tx = io.send(std::as_bytes(std::span(out)));
        auto sent = co_await std::move(tx);
        if (!sent) {
          why = "send to " + conn->target + ": " + sent.err().message();
          break;
        }
        out.clear();
      }
      if (closing) {
        why = "the channel was destroyed";
        break;
      }
      if (nghttp2_session_want_read(conn->session) == 0 && nghttp2_session_want_write(conn->session) == 0) {
        why = "the server ended the connection (GOAWAY)";
        break;
      }
      auto w = co_await conn->wake.wait();
      (void)w;
    }
    g.cancel();
  };
  co_await task_group::run(std::move(body));
  conn->fail_all(why);
  nghttp2_session_del(conn->session);
  conn->session = nullptr;
  auto cl = io.close();
  co_await std::move(cl);
}

}  // namespace detail

namespace {

/// gRPC's status for an HTTP status other than 200 (the spec's mapping).
status_code from_http(int http) noexcept {
  switch (http) {
    case 400: return status_code::internal;
    case 401: return status_code::unauthenticated;
    case 403: return status_code::permission_denied;
    case 404: return status_code::unimplemented;
    case 429:
    case 502:
    case 503:
    case 504: return status_code::unavailable;
    default: return status_code::unknown;
  }
}

/// Waits for `c`'s event (a task of its own, so with_timeout can bound it).
task<bool> wait_event(detail::client_call& c) {
  auto w = co_await c.ev.wait();
  co_return static_cast<bool>(w);
}

}  // namespace

channel::channel(std::string target, channel_options opts)
    : m_target(std::move(target)), m_opts(opts), m_mu(std::make_shared<std::mutex>()) {}

channel::~channel() {
  std::shared_ptr<detail::client_conn> c;
  {
    std::lock_guard lock(*static_cast<std::mutex*>(m_mu.get()));
    c = std::move(m_conn);
  }
  if (c) {
    {
      std::lock_guard lock(c->mu);
      c->closing = true;
    }
    c->wake.set();
  }
}

task<status> channel::call(std::string_view method, std::vector<std::string> requests,
                           std::vector<std::string>& replies, call_options opts,
                           std::function<bool(std::string&)>* each,
                           std::vector<std::pair<std::string, std::string>>* trailers) {
  return run(method, std::move(requests), replies, std::move(opts), each, nullptr, trailers);
}

task<status> channel::run(std::string_view method, std::vector<std::string> requests, std::vector<std::string>& replies,
                          call_options opts, std::function<bool(std::string&)>* each,
                          std::function<task<bool>(std::string&)>* each_async,
                          std::vector<std::pair<std::string, std::string>>* trailers) {
  auto c = std::make_shared<detail::client_call>();
  c->path = method.empty() || method.front() != '/' ? "/" + std::string(method) : std::string(method);
  for (const auto& r : requests)
    detail::append_frame(c->body, r);
  c->headers = std::move(opts.metadata);
  std::optional<clock::time_point> deadline;
  if (opts.timeout) {
    deadline = clock::now() + *opts.timeout;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*opts.timeout).count();
    c->headers.emplace_back("grpc-timeout", std::to_string(std::max<std::int64_t>(ms, 1)) + "m");
  }
  // The connection: the live one, or a new one (its task on this task's scheduler).
  std::shared_ptr<detail::client_conn> conn;
  for (int attempt = 0;; ++attempt) {
    {
      std::lock_guard lock(*static_cast<std::mutex*>(m_mu.get()));
      if (!m_conn || m_conn->is_dead()) {
        m_conn = std::make_shared<detail::client_conn>(m_target, m_opts);
        saturn::spawn(detail::run_conn(m_conn)).detach();
      }
      conn = m_conn;
    }
    if (conn->submit(c))
      break;
    if (attempt == 1) {
      // Two connections died before the call could be queued (a refused connect is that
      // quick): say why the last one did.
      std::string why = conn->why_dead();
      co_return status{status_code::unavailable, why.empty() ? "no connection to " + m_target : why};
    }
  }
  std::string pending;
  std::size_t owed = 0;  // bytes taken and not yet given back to the window
  // The call ends early: reset it (the connection gives its window back).
  auto leave = [&](status st) {
    conn->cancel(c);
    return st;
  };
  for (;;) {
    bool done = false;
    {
      std::lock_guard lock(c->mu);
      owed += c->rx.size();
      pending.append(c->rx);
      c->rx.clear();
      done = c->done;
      if (!done)
        c->ev.reset();
    }
    // Cut the messages out of what arrived.
    std::size_t at = 0;
    for (;;) {
      std::string_view msg;
      std::size_t used = 0;
      const auto f = detail::take_frame(std::string_view(pending).substr(at), m_opts.max_receive_message, msg, used);
      if (f == detail::frame_status::incomplete)
        break;
      if (f != detail::frame_status::message)
        co_return leave(
            status{f == detail::frame_status::too_large ? status_code::resource_exhausted : status_code::internal,
                   f == detail::frame_status::too_large ? "a reply is larger than the limit"
                                                        : "a reply is compressed (not accepted)"});
      std::string m(msg);
      at += used;
      bool more = true;
      if (each != nullptr) {
        more = (*each)(m);
      } else if (each_async != nullptr) {
        // The handler is part of the call: the deadline bounds it too.
        auto handled = (*each_async)(m);
        if (deadline) {
          auto r = co_await with_timeout(*deadline - clock::now(), std::move(handled));
          if (!r && r.err() == std::errc::timed_out)
            co_return leave(status{status_code::deadline_exceeded, "the deadline passed"});
          more = r && *r;
        } else {
          more = co_await std::move(handled);
        }
      } else {
        replies.push_back(std::move(m));
      }
      if (!more)
        co_return leave(status{status_code::cancelled, "the reply handler cancelled the call"});
    }
    pending.erase(0, at);
    // Every whole message is handled and a partial one is kept: the window may reopen.
    // (A call that ended was given back by the connection.)
    if (!done)
      conn->consume(c, owed);
    owed = 0;
    if (done)
      break;
    bool woke = false;
    if (deadline) {
      const auto left = *deadline - clock::now();
      if (left <= clock::duration::zero())
        co_return leave(status{status_code::deadline_exceeded, "the deadline passed"});
      auto r = co_await with_timeout(left, wait_event(*c));
      if (!r && r.err() == std::errc::timed_out)
        co_return leave(status{status_code::deadline_exceeded, "the deadline passed"});
      woke = r && *r;
    } else {
      woke = co_await wait_event(*c);
    }
    if (!woke)
      co_return leave(status{status_code::cancelled, "the call was cancelled"});
  }
  std::lock_guard lock(c->mu);
  if (trailers != nullptr)
    *trailers = c->trailers;
  if (!c->failure.empty())
    co_return status{status_code::unavailable, c->failure};
  if (c->http_status != 200 && c->http_status != 0)
    co_return status{from_http(c->http_status), "HTTP status " + std::to_string(c->http_status)};
  if (c->grpc_status < 0)
    co_return c->reset_code != 0
        ? status{c->reset_code == NGHTTP2_REFUSED_STREAM ? status_code::unavailable : status_code::cancelled,
                 std::string("the server reset the call: ") + nghttp2_http2_strerror(c->reset_code)}
        : status{status_code::internal, "the answer carried no grpc-status"};
  if (!pending.empty())
    co_return status{status_code::internal, "the answer ended inside a message"};
  co_return status{c->grpc_status <= 16 ? static_cast<status_code>(c->grpc_status) : status_code::unknown,
                   c->grpc_message};
}

}  // namespace saturn::grpc
