// http::client: the pool, a request's round trip, and response_stream (see client.hpp).
#include <saturn/http/client.hpp>

#include <saturn/http/compression.hpp>
#include <saturn/http/content_coding.hpp>
#include <saturn/net/address.hpp>
#include <saturn/net/connect.hpp>
#include <saturn/task/time.hpp>
#include <saturn/tls/context.hpp>

#include <algorithm>
#include <array>
#include <saturn/detail/atomic.hpp>
#include <cstring>
#include <system_error>

#include "http/client_conn.hpp"
#include <saturn/net/stable_text.hpp>

namespace saturn::http {

namespace detail {

task<result<std::size_t>> client_conn::read_more(std::chrono::milliseconds timeout, std::size_t max_buffer) {
  if (begin == end) {
    begin = end = 0;
  } else if (end == buf.size() && begin > 0) {
    std::memmove(buf.data(), buf.data() + begin, end - begin);
    end -= begin;
    begin = 0;
  }
  if (end == buf.size()) {
    if (buf.size() >= max_buffer)
      co_return error{std::make_error_code(std::errc::message_size), "http client: response head too large"};
    buf.resize(std::min(buf.size() * 2, max_buffer));
  }
  std::span<std::byte> room(reinterpret_cast<std::byte*>(buf.data() + end), buf.size() - end);
  if (tls) {
    auto got = co_await with_timeout(timeout, tls->read(room));
    if (!got)
      co_return got.err();
    end += *got;
    co_return *got;
  }
  tcp.set_read_timeout(timeout);
  auto rd = tcp.recv(room);
  auto got = co_await rd;
  if (!got)
    co_return got.err();
  end += *got;
  co_return *got;
}

task<result<void>> client_conn::write_all(std::string_view bytes, std::chrono::milliseconds timeout) {
  std::span<const std::byte> b(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  if (tls) {
    auto w = co_await with_timeout(timeout, tls->write(b));
    if (!w)
      co_return w.err();
    co_return result<void>{};
  }
  auto tx = tcp.send(b);
  auto w = co_await tx;
  if (!w)
    co_return w.err();
  co_return result<void>{};
}

conn_lease::conn_lease() noexcept = default;
conn_lease::conn_lease(origin_pool* o) noexcept : origin(o) {}

conn_lease::conn_lease(conn_lease&& o) noexcept
    : origin(o.origin), conn(std::move(o.conn)), reusable(o.reusable) {
  o.origin = nullptr;
  o.reusable = false;
}

conn_lease& conn_lease::operator=(conn_lease&& o) noexcept {
  if (this != &o) {
    reset();
    origin = o.origin;
    conn = std::move(o.conn);
    reusable = o.reusable;
    o.origin = nullptr;
    o.reusable = false;
  }
  return *this;
}

conn_lease::~conn_lease() { reset(); }

void conn_lease::reset() noexcept {
  if (origin == nullptr)
    return;
  std::unique_ptr<client_conn> drop;
  if (conn && reusable && conn->buffered() == 0) {
    conn->idle_since = std::chrono::steady_clock::now();
    conn->reused = true;
    std::lock_guard lock(origin->mutex);
    origin->idle.push_back(std::move(conn));
  } else {
    drop = std::move(conn);  // closed below, outside the lock
  }
  drop.reset();
  origin->slots.release();
  origin = nullptr;
  reusable = false;
}

namespace {
saturn::detail::atomic<std::uint64_t> g_next_pool_id{1};

std::string user_agent_line(const client_options& o) {
  std::string l;
  if (!o.user_agent.empty()) {
    l.append("User-Agent: ").append(o.user_agent).append("\r\n");
  }
  return l;
}

/// One entry of a thread's target cache. An entry of a client that is gone is never
/// matched (pool ids are not reused) and only waits to be replaced.
struct cached_target {
  std::uint64_t pool_id = 0;
  std::string url;
  std::shared_ptr<const target> t;
};
constexpr std::size_t target_cache_size = 8;
thread_local std::array<cached_target, target_cache_size> t_targets;
thread_local std::size_t t_next_target = 0;
}  // namespace

client_pool::client_pool(client_options o)
    : id(g_next_pool_id.fetch_add(1, std::memory_order_relaxed)),
      opts(std::move(o)),
      user_agent_line(detail::user_agent_line(opts)) {}

result<std::shared_ptr<const target>> target_for(client_pool& pool, std::string_view url_text) {
  for (const cached_target& e : t_targets)
    if (e.pool_id == pool.id && e.url == url_text)
      return e.t;
  auto u = parse_url(url_text);
  if (!u)
    return u.err();
  auto t = std::make_shared<target>();
  t->u = std::move(*u);
  const std::string authority = t->u.authority();
  std::string key(t->u.https ? "https://" : "http://");
  key.append(authority);
  t->line_tail.reserve(t->u.target.size() + authority.size() + 24);
  t->line_tail.append(" ").append(t->u.target).append(" HTTP/1.1\r\nHost: ").append(authority).append("\r\n");
  {
    std::lock_guard lock(pool.mutex);
    auto& slot = pool.origins[key];
    if (!slot)
      slot = std::make_unique<origin_pool>(key, std::max<std::size_t>(1, pool.opts.max_connections_per_host));
    t->origin = slot.get();
  }
  cached_target& e = t_targets[t_next_target++ % target_cache_size];
  e.pool_id = pool.id;
  e.url.assign(url_text);
  e.t = t;
  return std::shared_ptr<const target>(std::move(t));
}

}  // namespace detail

namespace {

/// A process-lifetime text for an error (error::operation is a const char*).
const char* stable(std::string s) { return net::stable_text(std::move(s), "http client"); }

using detail::client_conn;
using detail::conn_lease;

error with_context(const error& e, const std::string& what) {
  return error{e.code, stable("http client: " + what + ": " + e.operation)};
}

error framing_error(const std::string& origin, const char* why) {
  return error{std::make_error_code(std::errc::protocol_error), stable("http client: " + origin + ": " + why)};
}

bool idempotent(std::string_view m) noexcept {
  return m == "GET" || m == "HEAD" || m == "PUT" || m == "DELETE" || m == "OPTIONS" || m == "TRACE";
}

/// Takes a pool slot of `t`'s origin and an idle connection, or connects a new one.
task<result<conn_lease>> lease_for(detail::client_pool& pool, const detail::target& t) {
  detail::origin_pool* origin = t.origin;
  const std::string& key = origin->key;
  const url& u = t.u;
  auto got = co_await origin->slots.acquire();
  if (!got)
    co_return with_context(got.err(), "waiting for a connection to " + key);
  conn_lease lease(origin);
  std::vector<std::unique_ptr<client_conn>> expired;
  {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(origin->mutex);
    while (!origin->idle.empty()) {
      auto c = std::move(origin->idle.back());
      origin->idle.pop_back();
      if (now - c->idle_since < pool.opts.idle_timeout) {
        lease.conn = std::move(c);
        break;
      }
      expired.push_back(std::move(c));
    }
  }
  expired.clear();  // closed outside the lock
  if (lease.conn)
    co_return std::move(lease);
  auto c = std::make_unique<client_conn>();
  // net::connect: numeric hosts directly, names through net::resolve (c-ares on the
  // ring), each address tried in turn within connect_timeout.
  const std::string target = (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) + ":" +
                             std::to_string(u.port);
  net::connect_options co;
  co.attempt_timeout = pool.opts.connect_timeout;
  co.resolve = pool.opts.resolve;
  auto tcp = co_await net::connect(target, co);
  if (!tcp)
    co_return with_context(tcp.err(), "connect " + key);
  (void)tcp->set_nodelay(true);
  if (u.https) {
    const tls::context* ctx = pool.opts.tls;
    if (ctx == nullptr) {
      std::lock_guard lock(pool.mutex);
      if (!pool.default_tls) {
        auto made = tls::context::client({});
        if (!made)
          co_return with_context(made.err(), "TLS context");
        pool.default_tls = std::make_unique<tls::context>(std::move(*made));
      }
      ctx = pool.default_tls.get();
    }
    auto s = tls::stream::client(*ctx, std::move(*tcp), u.host);
    if (!s)
      co_return with_context(s.err(), "TLS " + key);
    c->tls.emplace(std::move(*s));
    auto hs = c->tls->handshake(pool.opts.connect_timeout);
    auto shaken = co_await std::move(hs);
    if (!shaken)
      co_return with_context(shaken.err(), "TLS handshake with " + key);
  } else {
    c->tcp = std::move(*tcp);
  }
  {
    std::lock_guard lock(pool.mutex);
    ++pool.opened;
  }
  lease.conn = std::move(c);
  co_return std::move(lease);
}

std::string request_head(const client_request& req, const detail::target& t, const detail::client_pool& pool) {
  const client_options& o = pool.opts;
  std::string h;
  h.reserve(256 + req.body.size());
  h += req.method;
  h += t.line_tail;
  bool has_ua = false, has_ae = false;
  for (const auto& [n, v] : req.headers) {
    has_ua = has_ua || iequals(n, "user-agent");
    has_ae = has_ae || iequals(n, "accept-encoding");
    h += n;
    h += ": ";
    h += v;
    h += "\r\n";
  }
  if (!has_ua)
    h += pool.user_agent_line;
  if (!has_ae && o.decompress)
    h += "Accept-Encoding: gzip, br\r\n";
  if (req.body_source)
    h += "Transfer-Encoding: chunked\r\n";
  else if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH")
    h += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
  h += "\r\n";
  return h;
}

/// Bytes of a header value the client refuses to send (they would split the request).
bool bad_field_bytes(std::string_view s) noexcept { return s.find_first_of("\r\n") != std::string_view::npos; }

}  // namespace

// ---- response_stream --------------------------------------------------------------

response_stream::response_stream(detail::conn_lease lease, response_head head) noexcept
    : m_lease(std::move(lease)), m_head(std::move(head)), m_dec(m_head) {}
response_stream::response_stream(response_stream&&) noexcept = default;
response_stream& response_stream::operator=(response_stream&&) noexcept = default;
response_stream::~response_stream() = default;

task<result<void>> response_stream::fill() {
  decoder& d = m_dec;
  const std::string& origin = *d.origin;
  client_conn& c = *m_lease.conn;
  for (;;) {
    {
      // Feed even with nothing buffered: a zero-length body ends here without a read.
      const body_decoder::step st = d.body.feed(c.data(), c.buffered());
      c.consume(st.consumed);
      if (st.error != nullptr)
        co_return framing_error(origin, st.error);
      if (!st.data.empty()) {
        const std::size_t before = m_pending.size();
        if (d.coded) {
          auto w = d.coded->write(st.data, m_pending);
          if (!w)
            co_return with_context(w.err(), origin + ": decoding the body");
        } else {
          m_pending.append(st.data);
        }
        d.total += m_pending.size() - before;
        if (d.total > d.max_body)
          co_return error{std::make_error_code(std::errc::file_too_large),
                          stable("http client: " + origin + ": the body is over max_body")};
      }
      if (st.done) {
        if (d.coded) {
          auto f = d.coded->finish();
          if (!f)
            co_return with_context(f.err(), origin + ": decoding the body");
        }
        m_finished = true;
        m_lease.reusable = m_head.keep_alive;
        m_lease.reset();  // the connection goes back to the pool now
        co_return result<void>{};
      }
      if (!st.data.empty())
        co_return result<void>{};
      if (st.consumed != 0 && c.buffered() != 0)
        continue;  // framing consumed, more buffered
    }
    auto n = co_await c.read_more(d.timeout, std::size_t{1} << 20);
    if (!n)
      co_return with_context(n.err(), origin + ": reading the body");
    if (*n == 0) {
      const body_decoder::step st = d.body.end_of_stream();
      if (st.error != nullptr)
        co_return framing_error(origin, st.error);
      if (d.coded) {
        auto f = d.coded->finish();
        if (!f)
          co_return with_context(f.err(), origin + ": decoding the body");
      }
      m_finished = true;
      m_lease.reset();  // until-close: the connection is done
      co_return result<void>{};
    }
  }
}

task<result<std::size_t>> response_stream::read(std::span<std::byte> buf) {
  while (m_pending_off == m_pending.size() && !m_finished) {
    m_pending.clear();
    m_pending_off = 0;
    auto f = co_await fill();
    if (!f) {
      m_lease.reset();  // not reusable: closed
      m_finished = true;
      co_return f.err();
    }
  }
  const std::size_t n = std::min(buf.size(), m_pending.size() - m_pending_off);
  std::memcpy(buf.data(), m_pending.data() + m_pending_off, n);
  m_pending_off += n;
  co_return n;
}

task<result<std::string>> response_stream::read_all(std::size_t limit) {
  std::string out = m_pending.substr(m_pending_off);
  m_pending.clear();
  m_pending_off = 0;
  while (!m_finished) {
    auto f = co_await fill();
    if (!f) {
      m_lease.reset();
      m_finished = true;
      co_return f.err();
    }
    if (out.empty())
      out.swap(m_pending);  // a body in one piece: no copy
    else
      out += m_pending;
    m_pending.clear();
    if (out.size() > limit) {
      m_lease.reset();
      m_finished = true;
      co_return error{std::make_error_code(std::errc::file_too_large), "http client: read_all: the body is over the limit"};
    }
  }
  co_return out;
}

// ---- client ------------------------------------------------------------------------

client::client(client_options opts) : m_pool(std::make_unique<detail::client_pool>(std::move(opts))) {}
client::~client() = default;

std::size_t client::connections_opened() const noexcept {
  std::lock_guard lock(m_pool->mutex);
  return m_pool->opened;
}

std::size_t client::idle_connections() const noexcept {
  std::lock_guard lock(m_pool->mutex);
  std::size_t n = 0;
  for (const auto& [k, o] : m_pool->origins) {
    std::lock_guard idle_lock(o->mutex);
    n += o->idle.size();
  }
  return n;
}

std::string_view client_response::header(std::string_view name) const noexcept {
  for (const auto& [n, v] : headers)
    if (iequals(n, name))
      return v;
  return {};
}

task<result<response_stream>> client::send_once(const client_request& req, const detail::target& t, bool& retryable) {
  retryable = false;
  const client_options& o = m_pool->opts;
  const std::string& key = t.origin->key;
  auto leased = co_await lease_for(*m_pool, t);
  if (!leased)
    co_return leased.err();
  conn_lease lease = std::move(*leased);
  client_conn& c = *lease.conn;
  const bool reused = c.reused;
  std::string head = request_head(req, t, *m_pool);
  if (!req.body_source && req.body.size() <= 64 * 1024) {
    head += req.body;  // one write for the head and a small body
    auto w = co_await c.write_all(head, o.timeout);
    if (!w) {
      retryable = reused;
      co_return with_context(w.err(), "sending to " + key);
    }
  } else {
    auto w = co_await c.write_all(head, o.timeout);
    if (!w) {
      retryable = reused;
      co_return with_context(w.err(), "sending to " + key);
    }
    if (!req.body_source) {
      auto wb = co_await c.write_all(req.body, o.timeout);
      if (!wb)
        co_return with_context(wb.err(), "sending the body to " + key);
    } else {
      std::vector<std::byte> piece(16 * 1024);
      for (;;) {
        auto n = co_await req.body_source(piece);
        if (!n)
          co_return with_context(n.err(), "the request body source");
        char size_line[32];
        const int len = std::snprintf(size_line, sizeof size_line, "%zx\r\n", *n);
        std::string frame(size_line, static_cast<std::size_t>(len));
        frame.append(reinterpret_cast<const char*>(piece.data()), *n);
        frame += "\r\n";
        auto wb = co_await c.write_all(frame, o.timeout);
        if (!wb)
          co_return with_context(wb.err(), "sending the body to " + key);
        if (*n == 0)
          break;
      }
    }
  }
  // The head of the answer (1xx interim answers skipped).
  response_parser parser;
  const bool head_req = req.method == "HEAD";
  bool any_byte = false;
  for (;;) {
    if (c.buffered() != 0) {
      any_byte = true;
      const parse_status ps = parser.parse(c.data(), c.buffered(), head_req);
      if (ps == parse_status::error)
        co_return framing_error(key, parser.error_reason().data());
      if (ps == parse_status::complete) {
        c.consume(parser.consumed());
        const int s = parser.head().status;
        if (s >= 100 && s < 200 && s != 101) {
          parser.reset();
          continue;
        }
        break;
      }
    }
    auto n = co_await c.read_more(o.timeout, response_limits{}.max_head + 1024);
    if (!n) {
      retryable = reused && !any_byte;
      co_return with_context(n.err(), "waiting for the answer of " + key);
    }
    if (*n == 0) {
      retryable = reused && !any_byte;
      co_return error{std::make_error_code(std::errc::connection_reset),
                      stable("http client: " + key + ": the connection closed before the answer")};
    }
  }
  response_head h = std::move(parser.head());
  response_stream rs(std::move(lease), std::move(h));
  rs.m_dec.max_body = o.max_body;
  rs.m_dec.timeout = o.timeout;
  rs.m_dec.origin = &key;
  if (o.decompress && rs.m_head.framing != body_framing::none) {
    if (const std::string_view ce = rs.m_head.get("content-encoding"); !ce.empty() && !iequals(ce, "identity")) {
      const auto coding = parse_coding(ce);
      if (!coding)
        co_return framing_error(key, "a Content-Encoding the client cannot decode");
      auto dec = stream_decoder::make(*coding, o.max_body);
      if (!dec)
        co_return with_context(dec.err(), "decoder");
      rs.m_dec.coded.emplace(std::move(*dec));
    }
  }
  if (rs.m_head.framing == body_framing::none || (rs.m_head.framing == body_framing::length && rs.m_head.content_length == 0)) {
    auto f = co_await rs.fill();  // finishes at once: the connection goes back to the pool
    if (!f)
      co_return f.err();
  }
  co_return rs;
}

task<result<response_stream>> client::send(client_request req) {
  if (bad_field_bytes(req.method) || req.method.empty())
    co_return error{std::make_error_code(std::errc::invalid_argument), "http client: an empty method or CR/LF in it"};
  for (const auto& [n, v] : req.headers)
    if (n.empty() || bad_field_bytes(n) || bad_field_bytes(v) || n.find(':') != std::string::npos)
      co_return error{std::make_error_code(std::errc::invalid_argument),
                      "http client: a header field with an empty name, a colon in the name, or CR/LF"};
  auto first = detail::target_for(*m_pool, req.url);
  if (!first)
    co_return first.err();
  std::shared_ptr<const detail::target> t = std::move(*first);
  for (int hop = 0;; ++hop) {
    bool retryable = false;
    auto r = co_await send_once(req, *t, retryable);
    if (!r && retryable && idempotent(req.method) && !req.body_source)
      r = co_await send_once(req, *t, retryable);  // the server closed an idle connection
    if (!r)
      co_return r.err();
    const int s = r->status();
    const std::string_view loc = r->head().get("location");
    const bool redirect = (s == 301 || s == 302 || s == 303 || s == 307 || s == 308) && !loc.empty();
    if (!redirect || hop >= m_pool->opts.max_redirects || req.body_source)
      co_return std::move(*r);
    std::string next;
    if (loc.front() == '/' && (loc.size() < 2 || loc[1] != '/'))
      next = (t->u.https ? "https://" : "http://") + t->u.authority() + std::string(loc);
    else
      next.assign(loc);
    auto nt = detail::target_for(*m_pool, next);
    if (!nt)
      co_return std::move(*r);  // a Location the client cannot follow: the answer as it is
    // Keep the connection: a small redirect body is read off it.
    (void)co_await r->read_all(64 * 1024);
    if (s == 303 || ((s == 301 || s == 302) && req.method == "POST")) {
      req.method = "GET";
      req.body.clear();
    }
    t = std::move(*nt);
    req.url = std::move(next);
  }
}

task<result<client_response>> client::request(client_request req) {
  auto s = co_await send(std::move(req));
  if (!s)
    co_return s.err();
  auto body = co_await s->read_all(m_pool->opts.max_body);
  if (!body)
    co_return body.err();
  client_response out;
  out.status = s->status();
  out.headers = std::move(s->m_head.fields);  // the stream is done with them: no copy per request
  out.body = std::move(*body);
  co_return out;
}

task<result<client_response>> client::get(std::string_view url_text) {
  client_request req;
  req.url.assign(url_text);
  co_return co_await request(std::move(req));
}

}  // namespace saturn::http
