// pg::connection: the v3 frontend/backend protocol over a saturn stream socket.
//
// Protocol of a query (extended protocol, statement cache):
//   first time a (sql, parameter types) pair is seen: Parse(name) + Describe(S) + Sync,
//   read ParseComplete, ParameterDescription, RowDescription|NoData, ReadyForQuery, and
//   cache the name and the columns (with the wire format chosen per column: binary for
//   the types types.hpp decodes, text for the rest);
//   then, every time: Bind(params, result formats) + Execute + Sync, read BindComplete,
//   DataRow*, CommandComplete, ReadyForQuery.
// Cancellation: a stop of the task while a query is in flight ends the read with
// operation_canceled; the client then opens a second socket, sends CancelRequest(pid,
// secret), waits until the server closes it (the signal has been delivered), and reads
// the first socket on to ReadyForQuery — shielded from the stop, with a read timeout —
// so the connection is left idle and in sync.
#include "pg/state.hpp"

#include "pg/auth.hpp"
#include "pg/shield.hpp"
#include "pg/text.hpp"

#include <saturn/net/connect.hpp>
#include <saturn/net/unix_socket.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include <sys/socket.h>

#include <cstring>

namespace saturn::pg {
namespace detail {
namespace {

constexpr std::size_t recv_chunk = 64 * 1024;

std::int16_t get16(const char* p) {
  return static_cast<std::int16_t>((std::uint16_t(std::uint8_t(p[0])) << 8) | std::uint16_t(std::uint8_t(p[1])));
}

bool binary_type(std::uint32_t t) {
  switch (t) {
    case oid::boolean:
    case oid::bytea:
    case oid::name:
    case oid::int8:
    case oid::int2:
    case oid::int4:
    case oid::text:
    case oid::oid:
    case oid::json:
    case oid::float4:
    case oid::float8:
    case oid::bpchar:
    case oid::varchar:
    case oid::timestamp:
    case oid::timestamptz:
    case oid::jsonb: return true;
    default: return false;
  }
}

std::shared_ptr<const std::vector<column>> parse_row_description(const message& m) {
  auto cols = std::make_shared<std::vector<column>>();
  const char* p = m.body;
  const char* end = m.body + m.size;
  const int n = get16(p);
  p += 2;
  for (int i = 0; i < n && p < end; ++i) {
    column c;
    const std::size_t len = strnlen(p, static_cast<std::size_t>(end - p));
    c.name.assign(p, len);
    p += len + 1;
    if (end - p < 18)
      break;
    c.type = static_cast<std::uint32_t>(get32(p + 6));
    c.format = binary_type(c.type) ? 1 : 0;
    p += 18;
    cols->push_back(std::move(c));
  }
  return cols;
}

// Cell positions of a DataRow body, relative to `base_offset`; false if malformed.
bool parse_cells(const message& m, std::size_t ncols, std::vector<cell>& out, std::uint32_t base_offset) {
  if (m.size < 2 || static_cast<std::size_t>(get16(m.body)) != ncols)
    return false;
  std::size_t p = 2;
  for (std::size_t i = 0; i < ncols; ++i) {
    if (p + 4 > m.size)
      return false;
    const std::int32_t len = get32(m.body + p);
    p += 4;
    cell c;
    c.offset = base_offset + static_cast<std::uint32_t>(p);
    c.size = len;
    if (len > 0) {
      if (p + static_cast<std::size_t>(len) > m.size)
        return false;
      p += static_cast<std::size_t>(len);
    }
    out.push_back(c);
  }
  return true;
}

}  // namespace

error connection_state::fail(errc kind, std::string what, saturn::error io) {
  if (kind == errc::connection || kind == errc::protocol)
    broken = true;
  error e;
  e.kind = kind;
  e.message = std::move(what);
  e.io = io;
  return e;
}

namespace {
task<saturn::result<std::size_t>> send_all(connection_state* s, const std::string* buf) {
  const auto bytes = std::as_bytes(std::span(buf->data(), buf->size()));
  if (s->tls)
    co_return co_await s->tls->write(bytes);
  co_return co_await s->sock.send(bytes);
}
task<saturn::result<std::size_t>> recv_some(connection_state* s, std::span<std::byte> into) {
  if (s->tls)
    co_return co_await s->tls->read(into);
  co_return co_await s->sock.recv(into);
}

}  // namespace

task<result<void>> connection_state::flush() {
  auto r = co_await shield(send_all(this, &wbuf));
  wbuf.clear();
  if (!r)
    co_return fail(errc::connection, "send to the server failed", r.err());
  co_return result<void>{};
}

task<result<message>> connection_state::next(bool in_query) {
  for (;;) {
    message m;
    if (take_buffered(m))
      co_return m;
    if (rend - rpos >= 5 && get32(rbuf.data() + rpos + 1) < 4)
      co_return fail(errc::protocol, "bad message length from the server");
    // Need more bytes: compact, then receive after rend. rbuf keeps its size between
    // reads (growing it zero-fills, which cost a 64 KiB memset per round trip).
    if (rpos > 0 && (rpos == rend || rpos > recv_chunk)) {
      std::memmove(rbuf.data(), rbuf.data() + rpos, rend - rpos);
      rend -= rpos;
      rpos = 0;
    }
    if (rbuf.size() < rend + recv_chunk)
      rbuf.resize(rend + recv_chunk);
    auto into = std::as_writable_bytes(std::span(rbuf.data() + rend, recv_chunk));
    // (if/else, not ?: : g++ 12 miscompiles co_await inside a conditional expression.)
    saturn::result<std::size_t> n = saturn::error{};
    if (cancelling)
      n = co_await shield(recv_some(this, into));
    else if (tls) {
      n = co_await tls->read(into);
      // tls::stream::read completes without suspending while OpenSSL holds records it
      // read ahead, so a large result would resume this frame and its caller once per
      // chunk on one ever deeper stack (sanitizer builds make no tail calls: 100,000
      // rows overflowed it). One yield per chunk lets the stack unwind.
      co_await saturn::yield();
    } else
      n = co_await sock.recv(into);
    if (!n) {
      if (n.err() == std::errc::operation_canceled) {
        if (!in_query)
          co_return fail(errc::cancelled, "cancelled while waiting");
        if (!cancelling) {
          cancelling = true;
          raw().set_read_timeout(cfg.cancel_timeout);
          co_await shield(send_cancel(cfg, pid, secret));
        }
        continue;
      }
      co_return fail(errc::connection, "receive from the server failed", n.err());
    }
    rend += *n;
    if (*n == 0)
      co_return fail(errc::connection, "the server closed the connection");
  }
}

task<result<void>> connection_state::drain(error* first) {
  for (;;) {
    auto m = co_await next(true);
    if (!m)
      co_return m.err();
    if (m->type == 'E' && first != nullptr && first->message.empty())
      *first = server_error(*m);
    if (m->type == 'Z') {
      tx_status = m->size > 0 ? m->body[0] : 'I';
      co_return result<void>{};
    }
  }
}

}  // namespace detail

using detail::connection_state;
using detail::cat;
using detail::message;

connection::connection() noexcept = default;
connection::connection(std::unique_ptr<connection_state> s) noexcept : m_s(std::move(s)) {}
connection::connection(connection&&) noexcept = default;
connection& connection::operator=(connection&&) noexcept = default;
connection::~connection() = default;

bool connection::is_broken() const noexcept { return !m_s || m_s->broken; }
bool connection::in_transaction() const noexcept { return m_s && m_s->tx_status != 'I'; }
std::int32_t connection::backend_pid() const noexcept { return m_s ? m_s->pid : 0; }
std::size_t connection::prepared_count() const noexcept { return m_s ? m_s->cache.size() : 0; }
void connection::schedule_rollback() noexcept {
  if (m_s)
    m_s->rollback_pending = true;
}
bool connection::needs_reset() const noexcept { return m_s && (m_s->rollback_pending || m_s->tx_status != 'I'); }
std::string connection::parameter(std::string_view name) const {
  if (!m_s)
    return {};
  auto it = m_s->server_params.find(std::string(name));
  return it == m_s->server_params.end() ? std::string() : it->second;
}
bool connection::is_stale() const noexcept {
  if (!m_s || m_s->broken || !m_s->raw().is_open())
    return true;
  if (m_s->rpos < m_s->rend)
    return true;
  char b;
  const ssize_t n = ::recv(m_s->raw().fd(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}

namespace {

task<result<connection>> connect_inner(config cfg) {
  auto s = std::make_unique<connection_state>();
  s->cfg = std::move(cfg);
  if (s->cfg.user.empty())
    co_return s->fail(errc::config, "no user given");
  if (s->cfg.is_unix()) {
    auto u = co_await net::unix_stream::connect(s->cfg.socket_path());
    if (!u)
      co_return s->fail(errc::connection, cat({"connect to ", s->cfg.socket_path(), " failed"}), u.err());
    s->sock = std::move(*u);
  } else {
    std::string hp = s->cfg.host.find(':') != std::string::npos ? cat({"[", s->cfg.host, "]"}) : s->cfg.host;
    hp.append(":").append(std::to_string(s->cfg.port));
    auto t = co_await net::connect(hp);
    if (!t)
      co_return s->fail(errc::connection, cat({"connect to ", hp, " failed"}), t.err());
    s->sock = std::move(*t);
    if (auto tr = co_await detail::negotiate_tls(s.get()); !tr)
      co_return tr.err();
  }
  auto r = co_await detail::startup(s.get());
  if (!r)
    co_return r.err();
  co_return connection(std::move(s));
}

struct busy_guard {
  connection_state* s;
  ~busy_guard() {
    s->busy = false;
    s->cancelling = false;
    s->raw().set_read_timeout(std::chrono::milliseconds(0));
  }
};

result<void> enter(connection_state* s) {
  if (s == nullptr || s->busy) {
    error e;
    e.kind = errc::misuse;
    e.message = s == nullptr ? "the connection is empty" : "the connection is in use by another task";
    return e;
  }
  if (s->broken) {
    error e;
    e.kind = errc::connection;
    e.message = "the connection is broken";
    return e;
  }
  s->busy = true;
  return {};
}

// A scheduled ROLLBACK, sent before the call that follows it.
task<result<void>> maybe_rollback(connection_state* s) {
  if (!s->rollback_pending)
    co_return result<void>{};
  s->rollback_pending = false;
  if (s->tx_status == 'I')
    co_return result<void>{};
  const std::size_t a = s->begin('Q');
  s->put_cstr("ROLLBACK");
  s->end(a);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  error first;
  auto d = co_await s->drain(&first);
  if (!d)
    co_return d.err();
  co_return result<void>{};
}

// The statement cache's key: the text, then each parameter type's OID as 4 raw bytes,
// written into `key` (a reused buffer: a lookup allocates nothing once it has grown).
void cache_key(std::string& key, std::string_view sql, const params& ps) {
  key.assign(sql);
  key.push_back('\0');
  for (std::uint32_t t : ps.types())
    key.append(reinterpret_cast<const char*>(&t), sizeof t);
}

void write_parse_describe(connection_state* s, const std::string& name, std::string_view sql, const params& ps) {
  std::size_t a = s->begin('P');
  s->put_cstr(name);
  s->put_cstr(sql);
  s->put16(static_cast<std::int16_t>(ps.size()));
  for (std::uint32_t t : ps.types())
    s->put32(static_cast<std::int32_t>(t));
  s->end(a);
  a = s->begin('D');
  s->wbuf.push_back('S');
  s->put_cstr(name);
  s->end(a);
  a = s->begin('S');
  s->end(a);
}

// Reads the answer to write_parse_describe: the columns, or the server's error.
task<result<std::shared_ptr<const std::vector<column>>>> read_describe(connection_state* s) {
  std::shared_ptr<const std::vector<column>> cols = std::make_shared<const std::vector<column>>();
  error first;
  for (;;) {
    // Whole messages already received are taken without a task frame (and without
    // nesting a resumption per row: sanitizer builds have no tail calls); next() only
    // when bytes must be received.
    detail::message got;
    const bool have = s->take_buffered(got);
    result<detail::message> m = have ? result<detail::message>(got) : result<detail::message>(error{});
    if (!have)
      m = co_await s->next(true);
    if (!m)
      co_return m.err();
    if (m->type == 'E') {
      first = detail::server_error(*m);
    } else if (m->type == 'T') {
      cols = detail::parse_row_description(*m);
    } else if (m->type == 'Z') {
      s->tx_status = m->size > 0 ? m->body[0] : 'I';
      if (!first.message.empty() || !first.sqlstate.empty())
        co_return first;
      co_return cols;
    }
  }
}

void write_bind_execute(connection_state* s, const detail::prepared& st, const params& ps) {
  std::size_t a = s->begin('B');
  s->wbuf.push_back('\0');
  s->put_cstr(st.name);
  s->put16(static_cast<std::int16_t>(ps.size()));
  for (std::int16_t f : ps.formats())
    s->put16(f);
  s->put16(static_cast<std::int16_t>(ps.size()));
  s->wbuf.append(ps.values());
  s->put16(static_cast<std::int16_t>(st.cols->size()));
  for (const column& c : *st.cols)
    s->put16(c.format);
  s->end(a);
  a = s->begin('E');
  s->wbuf.push_back('\0');
  s->put32(0);
  s->end(a);
  a = s->begin('S');
  s->end(a);
}

// Reads one Bind/Execute/Sync answer. Rows go into `out`, or to `on_row` when set.
task<result<std::uint64_t>> read_execute(connection_state* s, const detail::prepared& st, rows* out,
                                         const std::function<void(const row&)>* on_row) {
  error first;
  std::uint64_t count = 0;
  std::vector<detail::cell> cells;
  const std::size_t ncols = st.cols->size();
  if (out != nullptr)
    out->m_cols = st.cols;
  for (;;) {
    // As in read_describe: messages already received are taken without a task frame, so
    // a large result neither nests a resumption per row (sanitizer builds make no tail
    // calls) nor pays a coroutine frame per row; next() only when bytes must come.
    detail::message got;
    const bool have = s->take_buffered(got);
    result<detail::message> m = have ? result<detail::message>(got) : result<detail::message>(error{});
    if (!have)
      m = co_await s->next(true);
    if (!m)
      co_return m.err();
    switch (m->type) {
      case 'D':
        if (!first.message.empty() || !first.sqlstate.empty())
          break;
        if (out != nullptr) {
          // Cell offsets are 32-bit: a result of 4 GiB or more is refused, not wrapped.
          if (out->m_data.size() + m->size > UINT32_MAX)
            co_return s->fail(errc::protocol, "a result of 4 GiB or more cannot be held in pg::rows; read it with "
                                              "connection::for_each (a row callback) instead");
          if (out->m_data.size() + m->size > out->m_data.capacity() ||
              out->m_cells.size() + ncols > out->m_cells.capacity())
            detail::grow_into_spare(*out, m->size, ncols);
          const auto base = static_cast<std::uint32_t>(out->m_data.size());
          if (!detail::parse_cells(*m, ncols, out->m_cells, base))
            co_return s->fail(errc::protocol, "malformed DataRow");
          out->m_data.append(m->body, m->size);
          ++out->m_count;
        } else {
          cells.clear();
          if (!detail::parse_cells(*m, ncols, cells, 0))
            co_return s->fail(errc::protocol, "malformed DataRow");
          const row r(st.cols.get(), m->body, cells.data());
          (*on_row)(r);
        }
        ++count;
        break;
      case 'C':
        if (out != nullptr)
          out->m_tag.assign(m->body, strnlen(m->body, m->size));
        break;
      case 'E':
        if (first.message.empty() && first.sqlstate.empty())
          first = detail::server_error(*m);
        break;
      case 'Z':
        s->tx_status = m->size > 0 ? m->body[0] : 'I';
        if (!first.message.empty() || !first.sqlstate.empty()) {
          if (s->cancelling && first.kind != errc::cancelled)
            first.kind = errc::cancelled;
          co_return first;
        }
        if (s->cancelling) {
          // The statement finished before the cancel reached it: its answer is complete.
        }
        co_return count;
      default: break;  // BindComplete, EmptyQueryResponse, PortalSuspended
    }
  }
}

// The statement for (sql, parameter types), prepared now if it is not cached.
task<result<const detail::prepared*>> prepare(connection_state* s, std::string_view sql, const params& ps) {
  cache_key(s->key_scratch, sql, ps);
  if (auto it = s->cache.find(s->key_scratch); it != s->cache.end())
    co_return &it->second;
  std::string key = s->key_scratch;
  detail::prepared st;
  st.name = cat({"s", std::to_string(s->next_stmt++)});
  write_parse_describe(s, st.name, sql, ps);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  auto cols = co_await read_describe(s);
  if (!cols)
    co_return cols.err();
  st.cols = std::move(*cols);
  auto [it, _] = s->cache.emplace(std::move(key), std::move(st));
  co_return &it->second;
}

}  // namespace

task<result<connection>> connection::connect(config cfg) {
  if (cfg.connect_timeout.count() <= 0)
    co_return co_await connect_inner(std::move(cfg));
  const auto limit = cfg.connect_timeout;
  auto r = co_await with_timeout(limit, connect_inner(std::move(cfg)));
  if (!r) {
    error e;
    e.kind = errc::connection;
    e.message = "connect timed out";
    e.io = r.err();
    co_return e;
  }
  co_return std::move(*r);
}

task<result<connection>> connection::connect(std::string_view conninfo) {
  auto cfg = config::parse(conninfo);
  if (!cfg)
    co_return cfg.err();
  co_return co_await connect(std::move(*cfg));
}

task<result<rows>> connection::query_params(std::string_view sql, params ps) {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  if (auto rb = co_await maybe_rollback(s); !rb)
    co_return rb.err();
  auto st = co_await prepare(s, sql, ps);
  if (!st)
    co_return st.err();
  write_bind_execute(s, **st, ps);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  rows out;
  auto r = co_await read_execute(s, **st, &out, nullptr);
  if (!r)
    co_return r.err();
  co_return out;
}

task<result<std::uint64_t>> connection::for_each(std::string_view sql, params ps,
                                                 std::function<void(const row&)> on_row) {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  if (auto rb = co_await maybe_rollback(s); !rb)
    co_return rb.err();
  auto st = co_await prepare(s, sql, ps);
  if (!st)
    co_return st.err();
  write_bind_execute(s, **st, ps);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  co_return co_await read_execute(s, **st, nullptr, &on_row);
}

task<result<void>> connection::execute(std::string_view sql) {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  if (auto rb = co_await maybe_rollback(s); !rb)
    co_return rb.err();
  const std::size_t a = s->begin('Q');
  s->put_cstr(sql);
  s->end(a);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  error first;
  auto d = co_await s->drain(&first);
  if (!d)
    co_return d.err();
  if (!first.message.empty() || !first.sqlstate.empty())
    co_return first;
  if (s->cancelling) {
    error e;
    e.kind = errc::cancelled;
    e.message = "cancelled";
    co_return e;
  }
  co_return result<void>{};
}

task<result<std::vector<result<rows>>>> connection::pipeline(std::vector<statement> queries) {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  if (auto rb = co_await maybe_rollback(s); !rb)
    co_return rb.err();
  // 1. Each query's cached statement; the ones not cached yet (each distinct one once)
  //    prepared all in one write.
  constexpr std::size_t none = ~std::size_t{0};
  std::vector<const detail::prepared*> stmt(queries.size(), nullptr);
  std::vector<std::size_t> fresh_of;  // query i -> its index in fresh (none: cached)
  std::unordered_map<std::string, std::size_t> fresh_index;
  std::vector<std::size_t> fresh;  // the first query of each statement to prepare
  for (std::size_t i = 0; i < queries.size(); ++i) {
    cache_key(s->key_scratch, queries[i].sql, queries[i].args);
    if (auto it = s->cache.find(s->key_scratch); it != s->cache.end()) {
      stmt[i] = &it->second;
      continue;
    }
    if (fresh_of.empty())
      fresh_of.assign(queries.size(), none);
    auto [it, added] = fresh_index.emplace(s->key_scratch, fresh.size());
    if (added)
      fresh.push_back(i);
    fresh_of[i] = it->second;
  }
  std::vector<const detail::prepared*> fresh_stmt(fresh.size(), nullptr);
  std::vector<error> fresh_error(fresh.size());
  if (!fresh.empty()) {
    std::vector<std::string> names;
    for (std::size_t i : fresh) {
      names.push_back(cat({"s", std::to_string(s->next_stmt++)}));
      write_parse_describe(s, names.back(), queries[i].sql, queries[i].args);
    }
    if (auto f = co_await s->flush(); !f)
      co_return f.err();
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      auto cols = co_await read_describe(s);
      if (!cols) {
        if (cols.err().kind != errc::server)
          co_return cols.err();
        fresh_error[k] = cols.err();
        continue;
      }
      cache_key(s->key_scratch, queries[fresh[k]].sql, queries[fresh[k]].args);
      detail::prepared st{names[k], std::move(*cols)};
      // lifetime: unordered_map nodes never move, so the pointers stay valid.
      fresh_stmt[k] = &s->cache.emplace(s->key_scratch, std::move(st)).first->second;
    }
    for (std::size_t i = 0; i < queries.size(); ++i)
      if (fresh_of[i] != none)
        stmt[i] = fresh_stmt[fresh_of[i]];
  }
  // 2. Bind/Execute/Sync for every query, in windows of at most `window` bytes, two
  //    windows in flight: the next window is sent before the answers of the one before it
  //    are read, so the server has requests to run while the client reads (one window at
  //    a time left it idle at every boundary, for as long as the client took to be
  //    scheduled, read the last answers and send again).
  //    Deadlock freedom: the requests sent but not yet consumed by the server are at most
  //    two windows (96 KiB), less than the kernel buffers between the two sides (this
  //    socket's send buffer, at least 16 KiB, plus the server's receive buffer, 87-128 KiB
  //    by Linux's defaults), so a send completes even if the server, its answers unread,
  //    stops reading. A statement larger than a window goes alone, and only when no other
  //    window is unread (the server then owes no answer and keeps reading).
  std::vector<result<rows>> out;
  out.reserve(queries.size());
  constexpr std::size_t window = 48 * 1024;
  const std::size_t n = queries.size();
  std::size_t sent = 0;            // queries written to the server
  std::size_t done = 0;            // queries whose answers were read
  std::size_t window_end[2] = {};  // the windows sent and not read yet, oldest first
  int unread = 0;
  while (done < n) {
    if (sent < n && unread < 2) {
      const std::size_t first = sent;
      while (sent < n) {
        const std::size_t before = s->wbuf.size();
        if (stmt[sent] != nullptr)
          write_bind_execute(s, *stmt[sent], queries[sent].args);
        if (s->wbuf.size() > window && (sent > first || unread > 0)) {
          s->wbuf.resize(before);  // goes into the next window
          break;
        }
        ++sent;
      }
      if (sent > first) {
        if (!s->wbuf.empty()) {
          if (auto f = co_await s->flush(); !f)
            co_return f.err();
        }
        window_end[unread++] = sent;
        continue;
      }
    }
    const std::size_t end = window_end[0];
    window_end[0] = window_end[1];
    --unread;
    for (std::size_t q = done; q < end; ++q) {
      if (stmt[q] == nullptr) {
        out.emplace_back(fresh_error[fresh_of[q]]);
        continue;
      }
      rows r;
      auto got = co_await read_execute(s, *stmt[q], &r, nullptr);
      if (!got && (got.err().kind == errc::connection || got.err().kind == errc::protocol))
        co_return got.err();
      if (got)
        out.emplace_back(std::move(r));
      else
        out.emplace_back(got.err());
    }
    done = end;
  }
  co_return out;
}

task<result<notification>> connection::next_notification() {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  for (;;) {
    if (!s->notifications.empty()) {
      notification n = std::move(s->notifications.front());
      s->notifications.pop_front();
      co_return n;
    }
    auto m = co_await s->next(false);
    if (!m)
      co_return m.err();
    if (m->type == 'E')
      co_return detail::server_error(*m);  // e.g. FATAL on shutdown; the socket closes next
  }
}

task<void> connection::close() {
  if (!m_s)
    co_return;
  if (!m_s->broken && !m_s->busy && m_s->raw().is_open()) {
    const std::size_t a = m_s->begin('X');
    m_s->end(a);
    co_await m_s->flush();
    if (m_s->tls)
      (void)co_await m_s->tls->shutdown();  // close_notify, as libpq sends
  }
  co_await m_s->raw().close();
  m_s.reset();
}

task<result<void>> connection::reset() {
  connection_state* s = m_s.get();
  if (auto e = enter(s); !e)
    co_return e.err();
  busy_guard guard{s};
  if (s->tx_status != 'I')
    s->rollback_pending = true;
  co_return co_await maybe_rollback(s);
}

task<result<transaction>> transaction::begin(connection& c, std::string_view begin_sql) {
  auto r = co_await c.execute(begin_sql);
  if (!r)
    co_return r.err();
  co_return transaction(&c);
}

task<result<void>> transaction::commit() {
  connection* c = std::exchange(m_c, nullptr);
  if (c == nullptr) {
    error e;
    e.kind = errc::misuse;
    e.message = "the transaction is already finished";
    co_return e;
  }
  // COMMIT of a failed transaction "succeeds" with the tag ROLLBACK: report it as an error.
  auto r = co_await c->query("COMMIT");
  if (!r)
    co_return r.err();
  if (c->in_transaction())
    c->schedule_rollback();
  if (r->command_tag() == "ROLLBACK") {
    error e;
    e.kind = errc::server;
    e.sqlstate = "40000";
    e.message = "COMMIT rolled back: a statement of the transaction had failed";
    co_return e;
  }
  co_return result<void>{};
}

task<result<void>> transaction::rollback() {
  connection* c = std::exchange(m_c, nullptr);
  if (c == nullptr)
    co_return result<void>{};
  co_return co_await c->execute("ROLLBACK");
}

task<result<rows>> with_deadline(std::chrono::nanoseconds d, task<result<rows>> t) {
  auto r = co_await with_timeout(d, std::move(t));
  if (!r) {
    error e;
    e.kind = errc::cancelled;
    e.message = "deadline expired";
    e.io = r.err();
    co_return e;
  }
  co_return std::move(*r);
}

}  // namespace saturn::pg
