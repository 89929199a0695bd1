// grpc::service: the routes of its methods, the calls' framing, deadlines and answers
// (service.hpp). Every method's route streams its body, so a request is read message by
// message within HTTP/2's flow-control window, and a message over the limit is answered
// RESOURCE_EXHAUSTED by the service rather than 413 by the server.
#include <saturn/grpc/service.hpp>

#include <saturn/task/time.hpp>

#include "grpc/wire.hpp"

#include <exception>
#include <limits>
#include <system_error>

namespace saturn::grpc {

namespace {

using http::request;
using http::response;

bool is_grpc(std::string_view content_type) noexcept {
  return content_type.substr(0, 16) == "application/grpc" &&
         (content_type.size() == 16 || content_type[16] == '+' || content_type[16] == ';');
}

void add_status(response& r, const status& st, const call_context* ctx) {
  r.add_trailer("grpc-status", std::to_string(static_cast<int>(st.code)));
  if (!st.message.empty())
    r.add_trailer("grpc-message", detail::percent_encode(st.message));
  if (ctx != nullptr)
    for (const auto& [k, v] : ctx->trailers())
      r.add_trailer(std::string_view(k), std::string_view(v));
}

/// A call that ends without a reply: one HEADERS frame with the status (Trailers-Only).
response trailers_only(const status& st, const call_context* ctx) {
  response r(200, "application/grpc", std::string());
  add_status(r, st, ctx);
  return r;
}

/// A call's messages, read from its streamed body (message_reader).
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and message_reader's destructor is protected
class body_reader final : public detail::message_reader {
 public:
  body_reader(const request& req, std::size_t max) noexcept : m_req(req), m_max(max) {}

  task<bool> next(std::string& bytes) override {
    for (;;) {
      std::string_view msg;
      std::size_t used = 0;
      switch (detail::take_frame(std::string_view(m_buf).substr(m_pos), m_max, msg, used)) {
        case detail::frame_status::message:
          bytes.assign(msg);
          m_pos += used;
          co_return true;
        case detail::frame_status::too_large:
          m_status = {status_code::resource_exhausted,
                      "a request message is larger than the limit of " + std::to_string(m_max) + " bytes"};
          co_return false;
        case detail::frame_status::compressed:
          m_status = {status_code::unimplemented, "compressed messages are not accepted (grpc-encoding identity only)"};
          co_return false;
        case detail::frame_status::incomplete:
          break;
      }
      if (m_pos > 0) {
        m_buf.erase(0, m_pos);
        m_pos = 0;
      }
      auto piece = co_await m_req.body().next_piece();
      if (!piece) {
        m_status = piece.err() == std::errc::operation_canceled
                       ? grpc::status{status_code::cancelled, "the call was cancelled"}
                       : grpc::status{status_code::cancelled, "the request stream failed: " + piece.err().message()};
        co_return false;
      }
      if (piece->empty()) {
        if (!m_buf.empty())
          m_status = {status_code::internal, "the request ended inside a message"};
        co_return false;
      }
      m_buf.append(*piece);
    }
  }

  const grpc::status& status() const noexcept override { return m_status; }

 private:
  const request& m_req;
  std::size_t m_max;
  std::string m_buf;
  std::size_t m_pos = 0;
  grpc::status m_status;
};

/// A server-streaming call's replies, framed into the response's body (message_writer).
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and message_writer's destructor is protected
class body_writer_adapter final : public detail::message_writer {
 public:
  body_writer_adapter(http::body_writer& w, std::size_t max) noexcept : m_w(w), m_max(max) {}

  task<bool> write(std::string bytes) override {
    if (bytes.size() > m_max) {
      m_status = {status_code::resource_exhausted, "a reply message is larger than the limit"};
      co_return false;
    }
    m_frame.clear();
    detail::append_frame(m_frame, bytes);
    auto sent = co_await m_w.write(m_frame);
    if (!sent)
      co_return false;
    // Each reply leaves at once: a stream's reader waits for it.
    auto flushed = co_await m_w.flush();
    co_return flushed.has_value();
  }
  const status& failure() const noexcept { return m_status; }

 private:
  http::body_writer& m_w;
  std::size_t m_max;
  std::string m_frame;
  status m_status;
};

/// Runs a method's task with the call's deadline; UNKNOWN if it throws.
task<status> guarded(task<status> t, std::optional<std::chrono::nanoseconds> timeout) {
  try {
    if (!timeout) {
      status st = co_await std::move(t);
      co_return st;
    }
    auto r = co_await with_timeout(*timeout, std::move(t));
    if (!r)
      co_return r.err() == std::errc::timed_out ? status{status_code::deadline_exceeded, "the deadline passed"}
                                                : status{status_code::cancelled, "the call was cancelled"};
    co_return *r;
  } catch (const std::exception& e) {
    co_return status{status_code::unknown, std::string("the method threw: ") + e.what()};
  }
}

/// The one request message of a unary or server-streaming call.
task<status> single_message(detail::message_reader& r, std::string& msg) {
  const bool got = co_await r.next(msg);
  if (!got)
    co_return r.status().ok() ? status{status_code::internal, "the call carried no request message"} : r.status();
  std::string extra;
  const bool more = co_await r.next(extra);
  if (more)
    co_return status{status_code::internal, "a unary call carried more than one request message"};
  co_return r.status();
}

/// Shared by a server-streaming call's handler and its producer.
struct stream_call {
  explicit stream_call(const request& req) : ctx(req) {}
  call_context ctx;
  std::string msg;
};

}  // namespace

void service::add_unary(std::string path, detail::unary_fn fn, std::shared_ptr<const void> typed,
                        const std::type_info* req, const std::type_info* rep) {
  auto m = std::make_unique<method>();
  m->path = std::move(path);
  m->k = kind::unary;
  m->unary = std::move(fn);
  m->typed = std::move(typed);
  m->req_type = req;
  m->rep_type = rep;
  m_methods.push_back(std::move(m));
}

void service::add_server_stream(std::string path, detail::server_stream_fn fn) {
  auto m = std::make_unique<method>();
  m->path = std::move(path);
  m->k = kind::server_stream;
  m->server_stream = std::move(fn);
  m_methods.push_back(std::move(m));
}

void service::add_client_stream(std::string path, detail::client_stream_fn fn) {
  auto m = std::make_unique<method>();
  m->path = std::move(path);
  m->k = kind::client_stream;
  m->client_stream = std::move(fn);
  m_methods.push_back(std::move(m));
}

std::vector<std::string> service::methods() const {
  std::vector<std::string> out;
  for (const auto& m : m_methods)
    out.push_back(m->path);
  return out;
}

task<response> service::call(const method& m, const request& req) const {
  if (req.version_major != 2)
    co_return response(505, "text/plain", "gRPC needs HTTP/2 (h2c by prior knowledge, or h2 over TLS)\n");
  if (!is_grpc(req.header("content-type")))
    co_return response(415, "text/plain", "a gRPC call needs content-type application/grpc\n");
  auto state = std::make_shared<stream_call>(req);
  call_context& ctx = state->ctx;
  if (const std::string_view t = req.header("grpc-timeout"); !t.empty()) {
    ctx.m_timeout = detail::parse_timeout(t);
    if (!ctx.m_timeout)
      co_return trailers_only({status_code::internal, "grpc-timeout is malformed"}, nullptr);
  }
  body_reader in(req, m_opts.max_receive_message);
  if (m.k == kind::client_stream) {
    std::string out;
    task<status> run = guarded(m.client_stream(in, out, ctx), ctx.m_timeout);
    status st = co_await std::move(run);
    if (st.ok() && out.size() > m_opts.max_send_message)
      st = {status_code::resource_exhausted, "the reply is larger than the limit"};
    if (!st.ok())
      co_return trailers_only(st, &ctx);
    std::string body;
    detail::append_frame(body, out);
    response r(200, "application/grpc", std::move(body));
    add_status(r, st, &ctx);
    co_return r;
  }
  status got = co_await single_message(in, state->msg);
  if (!got.ok())
    co_return trailers_only(got, &ctx);
  if (m.k == kind::unary) {
    std::string out;
    task<status> run = guarded(m.unary(state->msg, out, ctx), ctx.m_timeout);
    status st = co_await std::move(run);
    if (st.ok() && out.size() > m_opts.max_send_message)
      st = {status_code::resource_exhausted, "the reply is larger than the limit"};
    if (!st.ok())
      co_return trailers_only(st, &ctx);
    std::string body;
    body.reserve(detail::k_prefix + out.size());
    detail::append_frame(body, out);
    response r(200, "application/grpc", std::move(body));
    add_status(r, st, &ctx);
    co_return r;
  }
  // Server streaming: the replies are the answer's body, the status its trailers.
  const method* mp = &m;
  const std::size_t max_send = m_opts.max_send_message;
  auto producer = [mp, state, max_send](http::body_writer& w) -> task<result<void>> {
    body_writer_adapter out(w, max_send);
    task<status> run = guarded(mp->server_stream(state->msg, out, state->ctx), state->ctx.m_timeout);
    status st = co_await std::move(run);
    if (st.ok() && !out.failure().ok())
      st = out.failure();
    w.trailer("grpc-status", std::to_string(static_cast<int>(st.code)));
    if (!st.message.empty())
      w.trailer("grpc-message", detail::percent_encode(st.message));
    for (const auto& [k, v] : state->ctx.trailers())
      w.trailer(std::string_view(k), std::string_view(v));
    co_return result<void>{};
  };
  co_return response::stream(200, "application/grpc", std::move(producer));
}

void service::mount(http::router& r, bool fallback) const {
  // Every route streams its body: the service reads messages within the window and
  // applies its own limit (max_body: none at the HTTP level).
  const http::route_options ro{.stream_body = true, .max_body = std::numeric_limits<std::uint64_t>::max()};
  for (const auto& m : m_methods) {
    std::string pattern = m->path.front() == '/' ? m->path : "/" + m->path;
    const method* mp = m.get();
    r.add("POST", pattern, [this, mp](const request& req, const http::route_params&) { return call(*mp, req); }, ro);
  }
  if (fallback) {
    // Only gRPC calls: anything else no route matches still gets 404 / 405.
    r.otherwise([](const request& req) { return req.method == "POST" && is_grpc(req.header("content-type")); },
                [](const request& req, const http::route_params&) -> task<response> {
                  std::string what = "unknown method ";
                  what.append(req.path);
                  co_return trailers_only({status_code::unimplemented, std::move(what)}, nullptr);
                },
                ro);
  }
}

}  // namespace saturn::grpc
