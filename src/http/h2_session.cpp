// h2_session: nghttp2's server session driven by bytes (nghttp2_session_mem_recv /
// mem_send), its callbacks turned into streams, and answers turned into HEADERS and DATA.
//
// Flow control: the session is made with NGHTTP2_OPT_NO_AUTO_WINDOW_UPDATE, so a
// stream's window opens only when its bytes are taken — at once for a buffered body
// (after receive() returns), when the handler reads them for a streamed one. A handler
// that stops reading therefore holds one window (h2_options::stream_window) of its body,
// and the client is told to wait.
//
// Limits, and what each answers (RFC 9113):
//   * a head past parser_limits::max_head bytes (RFC 9113 §6.5.2's accounting) or past
//     max_header_fields fields: 431, the stream reset after the answer;
//   * a body past the route's limit: 413 (buffered) or errc::message_size to the handler
//     (streamed); the rest of an answered upload is dropped, and past 16 MiB the stream
//     is reset with NO_ERROR once the answer is out (§8.1);
//   * streams past max_concurrent_streams, malformed frames and fields, CONTINUATION and
//     reset floods, unanswered SETTINGS / PING acks: nghttp2's own checks (stream or
//     connection errors with their codes);
//   * PING / SETTINGS / PRIORITY / empty DATA past control_frames_per_second: GOAWAY
//     ENHANCE_YOUR_CALM.
#include "http/h2_session.hpp"

#include "http/connection_registry.hpp"
#include "http/server_metrics.hpp"
#include "http/unrouted.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace saturn::http::detail {

namespace {

/// Body bytes of an already answered stream taken (and dropped) before it is reset.
constexpr std::uint64_t k_drop_limit = 16u << 20;

h2_session& self(void* user) noexcept { return *static_cast<h2_session*>(user); }

std::string_view as_view(const std::uint8_t* p, std::size_t n) noexcept {
  return {reinterpret_cast<const char*>(p), n};
}

int cb_begin_headers(nghttp2_session*, const nghttp2_frame* f, void* user) {
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
    return 0;
  return self(user).on_begin_headers(f->hd.stream_id);
}

int cb_header(nghttp2_session*, const nghttp2_frame* f, const std::uint8_t* name, std::size_t namelen,
              const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
  if (f->hd.type != NGHTTP2_HEADERS)
    return 0;
  return self(user).on_header(f->hd.stream_id, static_cast<std::uint8_t>(f->headers.cat), as_view(name, namelen),
                              as_view(value, valuelen));
}

int cb_frame_recv(nghttp2_session*, const nghttp2_frame* f, void* user) {
  return self(user).on_frame_recv(f->hd.type, f->hd.flags, f->hd.stream_id, f->hd.length);
}

int cb_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
                  void* user) {
  return self(user).on_data_chunk(id, as_view(data, len));
}

int cb_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
  return self(user).on_stream_close(id, code);
}

int cb_frame_send(nghttp2_session*, const nghttp2_frame* f, void* user) {
  return self(user).on_frame_send(f->hd.type, f->hd.flags, f->hd.stream_id);
}

ssize_t cb_read(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                nghttp2_data_source*, void* user) {
  return self(user).read_body(id, buf, length, flags);
}

/// Fields a response may not carry in HTTP/2 (RFC 9113 §8.2.2): they are dropped.
bool connection_specific(std::string_view name) noexcept {
  return iequals(name, "connection") || iequals(name, "keep-alive") || iequals(name, "proxy-connection") ||
         iequals(name, "transfer-encoding") || iequals(name, "upgrade") || iequals(name, "content-length");
}

nghttp2_nv nv(std::string_view name, std::string_view value, std::uint8_t flags = NGHTTP2_NV_FLAG_NONE) noexcept {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-const-cast): nghttp2's nv is not const-correct; it only reads
  return nghttp2_nv{const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
                    const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())), name.size(),
                    value.size(), flags};
  // NOLINTEND(cppcoreguidelines-pro-type-const-cast)
}

/// Appends `fields` to `nva` with their names lowered (RFC 9113 §8.2.1) into `lower`,
/// whose capacity the caller reserved for all of them (so earlier views stay put);
/// connection-specific fields, and those the server writes itself, are dropped.
void add_fields(const std::vector<std::pair<text_value, text_value>>& fields, std::string& lower,
                std::vector<nghttp2_nv>& nva) {
  for (const auto& [name, value] : fields) {
    const std::string_view n = name.view();
    if (connection_specific(n) || iequals(n, "date") || iequals(n, "server"))
      continue;
    const std::size_t at = lower.size();
    for (char c : n)
      lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
    nva.push_back(nv(std::string_view(lower).substr(at, n.size()), value.view()));
  }
}

std::size_t name_bytes(const std::vector<std::pair<text_value, text_value>>& fields) noexcept {
  std::size_t n = 0;
  for (const auto& f : fields)
    n += f.first.size();
  return n;
}

struct callbacks {
  nghttp2_session_callbacks* cbs = nullptr;
  callbacks() {
    if (nghttp2_session_callbacks_new(&cbs) != 0)
      return;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, cb_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, cb_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, cb_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, cb_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, cb_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, cb_frame_send);
  }
  ~callbacks() { nghttp2_session_callbacks_del(cbs); }
  callbacks(const callbacks&) = delete;
  callbacks& operator=(const callbacks&) = delete;
};

}  // namespace

bool h2_sends_body(const h2_stream& st) noexcept {
  const int s = st.resp.status;
  return st.req.method != "HEAD" && s >= 200 && s != 204 && s != 304;
}

h2_session::h2_session(const router& r, const parser_limits& limits, const h2_options& opts,
                       std::string_view server_name, server_metrics& stats, const task_context& parent)
    : m_router(r), m_limits(limits), m_opts(opts), m_server_name(server_name), m_stats(stats), m_parent(parent) {
  static const callbacks cbs;  // immutable once made; nghttp2 copies nothing from it per session
  if (cbs.cbs == nullptr)
    return;
  nghttp2_option* opt = nullptr;
  if (nghttp2_option_new(&opt) != 0)
    return;
  nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_option_set_stream_reset_rate_limit(opt, opts.reset_burst, opts.reset_rate);
  nghttp2_option_set_max_continuations(opt, opts.max_continuations);
  const int rv = nghttp2_session_server_new2(&m_session, cbs.cbs, this, opt);
  nghttp2_option_del(opt);
  if (rv != 0) {
    m_session = nullptr;
    return;
  }
  const nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, opts.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, std::min<std::uint32_t>(opts.stream_window, NGHTTP2_MAX_WINDOW_SIZE)},
      {NGHTTP2_SETTINGS_MAX_FRAME_SIZE,
       std::clamp<std::uint32_t>(opts.max_frame_size, 16384, 16777215)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<std::uint32_t>(limits.max_head)},
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
  };
  nghttp2_submit_settings(m_session, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]);
  if (opts.connection_window > NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE)
    nghttp2_session_set_local_window_size(m_session, NGHTTP2_FLAG_NONE, 0,
                                          std::min<std::uint32_t>(opts.connection_window, NGHTTP2_MAX_WINDOW_SIZE));
}

h2_session::~h2_session() {
  // lifetime: every handler task has ended (the connection's task group joined them).
  if (m_session != nullptr)
    nghttp2_session_del(m_session);
}

bool h2_session::alive() const noexcept {
  return nghttp2_session_want_read(m_session) != 0 || nghttp2_session_want_write(m_session) != 0;
}

h2_stream* h2_session::find(std::int32_t id) const noexcept {
  return static_cast<h2_stream*>(nghttp2_session_get_stream_user_data(m_session, id));
}

bool h2_session::receive(std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const ssize_t rv = nghttp2_session_mem_recv(m_session, p, bytes.size());
  for (auto [id, n] : m_consume) {
    if (id == 0)
      nghttp2_session_consume_connection(m_session, n);
    else
      nghttp2_session_consume(m_session, id, n);
  }
  m_consume.clear();
  if (rv >= 0)
    return true;
  // A fatal error: nghttp2 stops reading. Say why before the connection closes — a flood
  // (unanswered acks, a CONTINUATION chain) is ENHANCE_YOUR_CALM, anything else a
  // protocol error.
  const bool flood = rv == NGHTTP2_ERR_FLOODED || rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS;
  nghttp2_session_terminate_session(m_session, flood ? NGHTTP2_ENHANCE_YOUR_CALM : NGHTTP2_PROTOCOL_ERROR);
  return false;
}

bool h2_session::produce(std::string& out, std::size_t budget) {
  for (;;) {
    const std::uint8_t* p = nullptr;
    const ssize_t n = nghttp2_session_mem_send(m_session, &p);
    if (n < 0)
      return false;
    if (n == 0)
      return true;
    out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    if (out.size() >= budget)
      return true;
  }
}

std::unique_ptr<h2_stream> h2_session::make_stream(std::int32_t id) {
  if (m_spare.empty()) {
    auto st = std::make_unique<h2_stream>(*this, id);
    st->strings.reserve(256);
    return st;
  }
  // A spare stream: every field back to its initial value, the buffers' capacity kept
  // (a stream's allocations were a good part of a small request's user-space CPU).
  std::unique_ptr<h2_stream> st = std::move(m_spare.back());
  m_spare.pop_back();
  h2_stream& x = *st;
  x.id = id;
  x.strings.clear();
  x.fields.clear();
  x.header_views.clear();
  x.method = x.path = x.authority = h2_stream::field_ref{};
  x.has_method = x.has_path = x.has_authority = x.has_host = false;
  x.head_bytes = 0;
  x.refuse = 0;
  request& r = x.req;
  r.method = r.target = r.path = r.raw_query = {};
  r.version_major = 2;
  r.version_minor = 0;
  r.keep_alive = true;
  r.chunked = false;
  r.m_params = nullptr;
  r.m_count = 0;
  r.m_body.reset_buffered({}, std::nullopt);
  x.match = route_match{};
  x.path_scratch.clear();
  x.remote_done = x.streamed_in = false;
  x.body_limit = x.body_received = x.body_returned = 0;
  x.window_settled = false;
  x.body.clear();
  x.in_source.reset();
  x.started = x.finished = x.submitted = x.closed = false;
  x.rst_after_answer = x.answer_out = false;
  x.dropped = 0;
  x.resp_off = 0;  // resp was cleared when the stream was put aside (maybe_free)
  x.t0 = 0;
  x.stop = std::stop_source();
  x.in_ready.reset();
  x.out_room.reset();
  x.in_pending.clear();
  x.in_end = x.in_failed = x.in_over = false;
  x.gone = false;
  x.out_pending.clear();
  x.out_taken = 0;
  x.out_trailers.clear();
  x.out_done = false;
  x.out_ok = true;
  x.deferred = false;
  return st;
}

int h2_session::on_begin_headers(std::int32_t id) {
  std::unique_ptr<h2_stream> st = make_stream(id);
  st->slot = m_streams.size();
  st->ctx = task_context{m_parent.sched, st->stop.get_token(), m_parent.live};
  nghttp2_session_set_stream_user_data(m_session, id, st.get());
  m_streams.push_back(std::move(st));
  ++m_live;
  return 0;
}

int h2_session::on_header(std::int32_t id, std::uint8_t cat, std::string_view name, std::string_view value) {
  h2_stream* st = find(id);
  if (st == nullptr || cat != NGHTTP2_HCAT_REQUEST)
    return 0;  // trailers of a request are not kept
  st->head_bytes += name.size() + value.size() + 32;
  if (st->refuse != 0)
    return 0;
  if (st->head_bytes > m_limits.max_head) {
    st->refuse = 431;
    return 0;
  }
  auto ref = [&] {
    h2_stream::field_ref r{static_cast<std::uint32_t>(st->strings.size()), static_cast<std::uint32_t>(name.size()), 0,
                           static_cast<std::uint32_t>(value.size())};
    st->strings.append(name);
    r.value_off = static_cast<std::uint32_t>(st->strings.size());
    st->strings.append(value);
    return r;
  };
  if (!name.empty() && name.front() == ':') {
    // nghttp2 has checked the pseudo-fields (known, once each, before the others).
    if (name == ":method") {
      st->method = ref();
      st->has_method = true;
    } else if (name == ":path") {
      st->path = ref();
      st->has_path = true;
    } else if (name == ":authority") {
      st->authority = ref();
      st->has_authority = true;
    }
    return 0;
  }
  if (st->fields.size() + 1 >= max_header_fields) {  // one place kept for `host`
    st->refuse = 431;
    return 0;
  }
  if (name == "host")
    st->has_host = true;
  st->fields.push_back(ref());
  return 0;
}

void h2_session::head_done(h2_stream& st) {
  if (st.refuse != 0) {
    answer(st, st.refuse, st.refuse == 431 ? "request header fields too large" : "refused");
    return;
  }
  const std::string_view all = st.strings;
  auto name_of = [&](const h2_stream::field_ref& r) { return all.substr(r.name_off, r.name_len); };
  auto value_of = [&](const h2_stream::field_ref& r) { return all.substr(r.value_off, r.value_len); };
  request& req = st.req;
  req.method = value_of(st.method);
  req.target = st.has_path ? value_of(st.path) : std::string_view();
  const std::size_t q = req.target.find('?');
  req.path = req.target.substr(0, q);
  req.raw_query = q == std::string_view::npos ? std::string_view() : req.target.substr(q + 1);
  req.version_major = 2;
  req.version_minor = 0;
  req.keep_alive = true;
  req.chunked = false;
  st.header_views.clear();
  if (st.has_authority && !st.has_host)
    st.header_views.push_back(header_field{"host", value_of(st.authority)});
  for (const auto& f : st.fields)
    st.header_views.push_back(header_field{name_of(f), value_of(f)});
  req.m_headers = st.header_views.data();
  req.m_count = st.header_views.size();
  if (req.path.empty() || req.path.front() != '/') {
    // CONNECT (authority only) or OPTIONS * : no tunnels here; * gets the server's methods.
    if (req.path == "*") {
      st.resp = unrouted(m_router, req, req.path, 404);
      st.rst_after_answer = !st.remote_done;
      submit(st);
      return;
    }
    answer(st, 501, "not implemented");
    return;
  }
  st.match = m_router.match(req.method, normalize_path(req.path, st.path_scratch));
  if (st.match.fn == nullptr) {
    if (const handler* other = m_router.otherwise_for(req, &st.match.options); other != nullptr) {
      st.match.fn = other;
      st.match.route = static_cast<unsigned>(m_stats.unmatched_route);
    }
  }
  if (st.match.fn == nullptr) {
    st.resp = unrouted(m_router, req, normalize_path(req.path, st.path_scratch), st.match.status);
    st.match.route = static_cast<unsigned>(m_stats.unmatched_route);
    st.refuse = st.resp.status;
    st.rst_after_answer = !st.remote_done;
    submit(st);
    return;
  }
  const route_options& ro = *st.match.options;
  st.body_limit = ro.max_body != 0 ? ro.max_body : m_limits.max_body;
  const std::string_view cl = req.header("content-length");
  std::uint64_t declared = 0;
  if (!cl.empty() && std::from_chars(cl.data(), cl.data() + cl.size(), declared).ec == std::errc{} &&
      declared > st.body_limit) {
    answer(st, 413, "request body too large");
    return;
  }
  if (ro.stream_body) {
    st.streamed_in = true;
    std::optional<std::uint64_t> length;
    if (!cl.empty())
      length = declared;
    else if (st.remote_done)
      length = 0;
    req.m_body.reset_streamed(&st.in_source, length);
    make_ready(st);
  }
}

void h2_session::make_ready(h2_stream& st) {
  if (st.started || st.refuse != 0)
    return;
  if (!st.streamed_in)
    st.req.m_body.reset_buffered(st.body, st.body.size());
  st.req.m_params = &st.match.params;  // lifetime: the stream outlives its handler's task
  st.started = true;
  st.t0 = server_metrics::sample_start();
  ++m_running;
  m_ready.push_back(&st);
}

int h2_session::on_frame_recv(std::uint8_t type, std::uint8_t flags, std::int32_t id, std::size_t length) {
  switch (type) {
    case NGHTTP2_PING:
    case NGHTTP2_SETTINGS:
      if ((flags & NGHTTP2_FLAG_ACK) == 0 && !count_control())
        return 0;
      break;
    case NGHTTP2_PRIORITY:
      if (!count_control())
        return 0;
      break;
    case NGHTTP2_DATA:
      if (length == 0 && (flags & NGHTTP2_FLAG_END_STREAM) == 0 && !count_control())
        return 0;
      break;
    default:
      break;
  }
  if (type != NGHTTP2_HEADERS && type != NGHTTP2_DATA)
    return 0;
  h2_stream* st = find(id);
  if (st == nullptr)
    return 0;
  const bool end = (flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (end)
    st->remote_done = true;
  if (type == NGHTTP2_HEADERS && st->req.method.empty() && st->has_method)
    head_done(*st);
  else if (type == NGHTTP2_HEADERS && !st->has_method && st->refuse != 0 && !st->submitted)
    answer(*st, st->refuse, "request header fields too large");
  if (!end)
    return 0;
  if (st->streamed_in) {
    {
      std::lock_guard lock(st->mu);
      st->in_end = true;
    }
    st->in_ready.set();
  } else if (!st->submitted) {
    make_ready(*st);
  }
  return 0;
}

int h2_session::on_data_chunk(std::int32_t id, std::string_view data) {
  h2_stream* st = find(id);
  if (st == nullptr) {
    m_consume.emplace_back(0, data.size());
    return 0;
  }
  st->body_received += data.size();
  if (st->streamed_in) {
    // Given back to the window when the handler takes it (h2_body::next).
    bool over = st->body_received > st->body_limit;
    {
      std::lock_guard lock(st->mu);
      if (over)
        st->in_failed = st->in_over = true;
      else if (!st->gone)
        st->in_pending.append(data);
    }
    if (over) {
      st->body_returned += data.size();
      m_consume.emplace_back(id, data.size());
    }
    st->in_ready.set();
    return 0;
  }
  st->body_returned += data.size();
  m_consume.emplace_back(id, data.size());
  if (st->refuse != 0 || st->submitted || st->started) {
    // Answered already (413, 404...): the rest is dropped. RFC 9113 §8.1 lets a server
    // end such an upload with RST_STREAM(NO_ERROR) once its answer is out, but curl
    // (7.88) then reports the answer as lost; so the client may finish sending, up to
    // k_drop_limit, and only a larger upload is cut short.
    st->dropped += data.size();
    if (st->answer_out && st->dropped > k_drop_limit && !st->remote_done) {
      nghttp2_submit_rst_stream(m_session, NGHTTP2_FLAG_NONE, id, NGHTTP2_NO_ERROR);
      st->remote_done = true;
    }
    return 0;
  }
  if (st->body_received > st->body_limit) {
    answer(*st, 413, "request body too large");
    return 0;
  }
  st->body.append(data);
  return 0;
}

int h2_session::on_stream_close(std::int32_t id, std::uint32_t) {
  h2_stream* st = find(id);
  if (st == nullptr)
    return 0;
  nghttp2_session_set_stream_user_data(m_session, id, nullptr);
  st->closed = true;
  if (st->body_received > st->body_returned) {
    // What the handler never took goes back to the connection's window.
    m_consume.emplace_back(0, st->body_received - st->body_returned);
    st->body_returned = st->body_received;
  }
  st->window_settled = true;
  if (st->started && !st->finished) {
    {
      std::lock_guard lock(st->mu);
      st->gone = true;
      if (!st->in_end)
        st->in_failed = true;
    }
    st->stop.request_stop();  // a reset stream's handler is cancelled
    st->in_ready.set();
    st->out_room.set();
  }
  maybe_free(st);
  return 0;
}

int h2_session::on_frame_send(std::uint8_t type, std::uint8_t flags, std::int32_t id) {
  if ((type != NGHTTP2_DATA && type != NGHTTP2_HEADERS) || (flags & NGHTTP2_FLAG_END_STREAM) == 0)
    return 0;
  h2_stream* st = find(id);
  if (st != nullptr && st->rst_after_answer)
    st->answer_out = true;
  return 0;
}

long h2_session::read_body(std::int32_t id, std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
  h2_stream* st = find(id);
  if (st == nullptr)
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  if (!st->resp.streamed()) {
    const std::string_view body = st->resp.body();
    const std::size_t n = std::min(length, body.size() - st->resp_off);
    std::memcpy(buf, body.data() + st->resp_off, n);
    st->resp_off += n;
    if (st->resp_off == body.size()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      if (submit_trailers(*st))
        *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
    return static_cast<long>(n);
  }
  std::size_t n = 0;
  bool wake_producer = false;
  {
    std::lock_guard lock(st->mu);
    const std::size_t avail = st->out_pending.size() - st->out_taken;
    n = std::min(length, avail);
    std::memcpy(buf, st->out_pending.data() + st->out_taken, n);
    st->out_taken += n;
    if (st->out_taken == st->out_pending.size()) {
      st->out_pending.clear();
      st->out_taken = 0;
      wake_producer = true;
    }
    if (n == 0) {
      if (!st->out_done) {
        st->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
      }
      if (!st->out_ok)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM: the client sees it cut short
    }
    if (st->out_done && st->out_pending.empty()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      if (submit_trailers(*st))
        *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
  }
  if (wake_producer)
    st->out_room.set();
  return static_cast<long>(n);
}

void h2_session::answer(h2_stream& st, int status, std::string_view reason) {
  std::string body(reason);
  body += '\n';
  st.resp = response(status, "text/plain", std::move(body));
  st.refuse = status;
  st.match.route = static_cast<unsigned>(m_stats.unmatched_route);
  st.rst_after_answer = !st.remote_done;
  submit(st);
}

void h2_session::submit(h2_stream& st) {
  if (st.submitted || st.closed)
    return;
  st.submitted = true;
  response& r = st.resp;
  if (r.upgrade()) {
    r = response(501, "text/plain", "protocol upgrade is not part of HTTP/2\n");
  }
  char status[4];
  std::to_chars(status, status + 3, std::clamp(r.status, 100, 999));
  const bool body = h2_sends_body(st);
  char length[24];
  std::size_t length_n = 0;
  const bool has_length = !r.streamed() || r.stream_length().has_value();
  if (has_length && r.status >= 200 && r.status != 204 && r.status != 304) {
    const std::uint64_t len = r.streamed() ? *r.stream_length() : r.body().size();
    length_n = static_cast<std::size_t>(std::to_chars(length, length + sizeof length, len).ptr - length);
  }
  // The field names must be lower case in HTTP/2 (RFC 9113 §8.2.1): lowered copies, made
  // in one buffer sized first so the views stay put.
  std::string& lower = m_lower;
  lower.clear();
  lower.reserve(name_bytes(r.headers()) + name_bytes(r.trailers()));
  std::vector<nghttp2_nv>& nva = m_nva;  // reused: no allocation per answer
  nva.clear();
  nva.reserve(5 + r.headers().size() + r.trailers().size());
  nva.push_back(nv(":status", std::string_view(status, 3), NGHTTP2_NV_FLAG_NO_COPY_NAME));
  nva.push_back(nv("server", m_server_name, NGHTTP2_NV_FLAG_NO_COPY_NAME));
  nva.push_back(nv("date", http_date(), NGHTTP2_NV_FLAG_NO_COPY_NAME));
  if (!r.content_type.empty())
    nva.push_back(nv("content-type", r.content_type.view(), NGHTTP2_NV_FLAG_NO_COPY_NAME));
  // An answer with trailers (gRPC's) goes without content-length, as gRPC servers send
  // it: the body's end is the stream's, and the header costs bytes on every answer.
  if (length_n != 0 && r.trailers().empty())
    nva.push_back(nv("content-length", std::string_view(length, length_n), NGHTTP2_NV_FLAG_NO_COPY_NAME));
  add_fields(r.headers(), lower, nva);
  nghttp2_data_provider prd{};
  prd.read_callback = cb_read;
  const bool with_data = body && (r.streamed() || !r.body().empty());
  if (!with_data)
    add_fields(r.trailers(), lower, nva);  // no body: one HEADERS frame (gRPC's Trailers-Only)
  nghttp2_submit_response(m_session, st.id, nva.data(), nva.size(), with_data ? &prd : nullptr);
  m_stats.count(st.match.fn != nullptr ? st.match.route : m_stats.unmatched_route, r.status);
  m_stats.sample_end(st.t0);
}

bool h2_session::submit_trailers(h2_stream& st) {
  // Called from nghttp2's read callback at EOF, as nghttp2_submit_trailer allows; for a
  // streamed answer under st.mu (out_trailers is complete once out_done is set).
  const auto& fixed = st.resp.trailers();
  if (fixed.empty() && st.out_trailers.empty())
    return false;
  std::string lower;
  lower.reserve(name_bytes(fixed) + name_bytes(st.out_trailers));
  std::vector<nghttp2_nv> nva;
  nva.reserve(fixed.size() + st.out_trailers.size());
  add_fields(fixed, lower, nva);
  add_fields(st.out_trailers, lower, nva);
  return nghttp2_submit_trailer(m_session, st.id, nva.data(), nva.size()) == 0;
}

void h2_session::post(h2_stream* st, h2_event e, std::size_t n) {
  {
    std::lock_guard lock(m_mu);
    m_posted.push_back(posted{st, e, n});
  }
  // lifetime: the session outlives every handler task (the connection's group joins them
  // before it is destroyed), so waking it after the unlock is safe; `st` is not touched.
  wake.set();
}

void h2_session::drain_events() {
  {
    std::lock_guard lock(m_mu);
    m_work.swap(m_posted);
  }
  for (const posted& p : m_work) {
    h2_stream& st = *p.st;
    switch (p.e) {
      case h2_event::head:
        submit(st);
        break;
      case h2_event::resume:
        if (!st.closed) {
          bool deferred = false;
          {
            std::lock_guard lock(st.mu);
            deferred = st.deferred;
            st.deferred = false;
          }
          if (deferred)
            nghttp2_session_resume_data(m_session, st.id);
        }
        break;
      case h2_event::consumed:
        if (!st.window_settled) {
          st.body_returned += p.n;
          nghttp2_session_consume(m_session, st.id, p.n);
        }
        break;
      case h2_event::finished:
        st.finished = true;
        --m_running;
        if (!st.submitted && !st.closed)
          submit(st);
        maybe_free(&st);
        break;
    }
  }
  m_work.clear();
  for (auto [id, n] : m_consume) {
    if (id == 0)
      nghttp2_session_consume_connection(m_session, n);
    else
      nghttp2_session_consume(m_session, id, n);
  }
  m_consume.clear();
}

void h2_session::maybe_free(h2_stream* st) noexcept {
  if (!st->closed || (st->started && !st->finished))
    return;
  const std::size_t i = st->slot;
  std::unique_ptr<h2_stream> gone = std::move(m_streams[i]);
  if (i + 1 != m_streams.size()) {
    m_streams[i] = std::move(m_streams.back());
    m_streams[i]->slot = i;
  }
  m_streams.pop_back();
  --m_live;
  // Kept for the next stream, up to the streams a client may open at once; its answer
  // (the body, which the next answer replaces anyway) is freed now, not kept idle.
  if (m_spare.size() < m_opts.max_concurrent_streams && gone->body.capacity() <= 64 * 1024 &&
      gone->out_pending.capacity() <= 64 * 1024) {
    gone->resp = response{};
    m_spare.push_back(std::move(gone));
  }
}

void h2_session::goaway() {
  if (m_stopping)
    return;
  m_stopping = true;
  nghttp2_submit_goaway(m_session, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(m_session),
                        NGHTTP2_NO_ERROR, nullptr, 0);
}

void h2_session::cancel_running() noexcept {
  for (auto& st : m_streams)
    if (st->started && !st->finished)
      st->stop.request_stop();
}

void h2_session::cancel_all() noexcept {
  for (auto& st : m_streams) {
    if (!st->started || st->finished)
      continue;
    {
      std::lock_guard lock(st->mu);
      st->gone = true;
      if (!st->in_end)
        st->in_failed = true;
    }
    st->stop.request_stop();
    st->in_ready.set();
    st->out_room.set();
  }
}

bool h2_session::count_control() noexcept {
  const std::int64_t now = coarse_now_ms();
  if (now - m_window_start_ms >= 1000) {
    m_window_start_ms = now;
    m_control = 0;
  }
  if (++m_control <= m_opts.control_frames_per_second)
    return true;
  nghttp2_session_terminate_session(m_session, NGHTTP2_ENHANCE_YOUR_CALM);
  return false;
}

}  // namespace saturn::http::detail
