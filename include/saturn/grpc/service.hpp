/// \file
/// gRPC services on saturn's HTTP/2 server: methods are coroutines over protobuf messages
/// (any type with protobuf's `ParseFromArray` and `SerializeToString`: protoc's generated
/// classes), mounted on an http::router as the POST routes gRPC clients call
/// (`/package.Service/Method`), served on every connection that speaks HTTP/2 — h2c by
/// prior knowledge (what gRPC clients send on a cleartext channel) or h2 over TLS.
///
///     saturn::grpc::service svc;
///     svc.unary<benchmark::SumRequest, benchmark::SumReply>(
///         "benchmark.BenchmarkService/GetSum",
///         [](const benchmark::SumRequest& in, benchmark::SumReply& out, saturn::grpc::call_context&)
///             -> saturn::task<saturn::grpc::status> {
///           out.set_result(in.a() + in.b());
///           co_return saturn::grpc::status::success();
///         });
///     saturn::http::router routes;
///     svc.mount(routes);
///
/// The protocol (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): messages
/// are length-prefixed (a compressed flag and 4 bytes of length); the answer is HEADERS
/// (200, `content-type: application/grpc`), the reply messages, and trailers with
/// `grpc-status` and `grpc-message` — or, for a call that fails before any reply, one
/// HEADERS frame with both (Trailers-Only). What each bad call gets:
///   * a content type that is not application/grpc…: HTTP 415 (the spec's SHOULD);
///   * HTTP/1.1: HTTP 505 (gRPC needs HTTP/2);
///   * an unknown method (with mount's fallback): UNIMPLEMENTED;
///   * a message over service_options::max_receive_message: RESOURCE_EXHAUSTED;
///   * a compressed message (no grpc-encoding is accepted but identity): UNIMPLEMENTED;
///   * a request that does not parse, or a unary call without exactly one message:
///     INTERNAL (the spec's answer to a malformed message);
///   * `grpc-timeout` passing: the method's awaits are cancelled and the call ends with
///     DEADLINE_EXCEEDED; a client's RST_STREAM cancels them too;
///   * a method that throws: UNKNOWN.
///
/// Threading: build the service and mount it before serving; it must outlive the router's
/// use. Methods run as the stream's handler task, on any worker, many at once.
#pragma once

#include <saturn/grpc/status.hpp>
#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/router.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace saturn::grpc {

/// A protobuf message type (protoc's generated classes, or anything with the same two
/// calls).
template <class M>
concept message = std::default_initializable<M> && requires(M m, const M cm, const void* p, int n, std::string* s) {
  { m.ParseFromArray(p, n) } -> std::convertible_to<bool>;
  { cm.SerializeToString(s) } -> std::convertible_to<bool>;
};

/// What a method sees of its call besides the messages. Threading: the method's task.
class call_context {
 public:
  explicit call_context(const http::request& req) noexcept : m_req(req) {}
  /// The request metadata `key` (lower case, as HTTP/2 sends it; a `-bin` key's value is
  /// its base64 text), empty when absent.
  std::string_view metadata(std::string_view key) const noexcept { return m_req.header(key); }
  /// The HTTP request the call came as (path, every field).
  const http::request& request() const noexcept { return m_req; }
  /// The time left when the call arrived (its `grpc-timeout`), nullopt without one. The
  /// method's awaits are cancelled when it passes.
  std::optional<std::chrono::nanoseconds> timeout() const noexcept { return m_timeout; }
  /// Adds trailing metadata, sent with the status. `name` must be a token, lower case.
  void add_trailer(std::string name, std::string value) { m_trailers.emplace_back(std::move(name), std::move(value)); }
  /// The trailing metadata added so far.
  const std::vector<std::pair<std::string, std::string>>& trailers() const noexcept { return m_trailers; }

 private:
  friend class service;
  const http::request& m_req;
  std::optional<std::chrono::nanoseconds> m_timeout;
  std::vector<std::pair<std::string, std::string>> m_trailers;
};

namespace detail {

/// Frames and sends a server-streaming method's replies (service.cpp).
class message_writer {
 public:
  /// Sends one serialized message; false when the call is over (the client went away or
  /// the message is too large).
  virtual task<bool> write(std::string bytes) = 0;

 protected:
  ~message_writer() = default;
};

/// Reads a client-streaming method's requests (service.cpp).
class message_reader {
 public:
  /// The next serialized message into `bytes`: true, or false at the end of the calls'
  /// messages (status() ok) or on an error (status() says which).
  virtual task<bool> next(std::string& bytes) = 0;
  virtual const grpc::status& status() const noexcept = 0;

 protected:
  ~message_reader() = default;
};

using unary_fn = std::function<task<grpc::status>(std::string_view in, std::string& out, call_context&)>;
using server_stream_fn = std::function<task<grpc::status>(std::string_view in, message_writer&, call_context&)>;
using client_stream_fn = std::function<task<grpc::status>(message_reader&, std::string& out, call_context&)>;

/// A unary method as the application gave it: messages in and out, no bytes.
template <class Req, class Rep>
struct typed_unary {
  std::function<task<grpc::status>(const Req&, Rep&, call_context&)> fn;
};

/// The reply of a method, serialized into `out`; INTERNAL if it cannot be.
template <message M>
grpc::status serialize(const M& m, std::string& out) {
  out.clear();
  if (!m.SerializeToString(&out))
    return {status_code::internal, "the reply could not be serialized"};
  return {};
}

}  // namespace detail

/// A server-streaming method's way out: write() sends one reply. Threading: the method's
/// task, one write at a time.
template <message M>
class writer {
 public:
  explicit writer(detail::message_writer& w) noexcept : m_w(w) {}
  /// Sends `m`; false when the call is over (the client reset it or went away, or `m`
  /// could not be serialized): stop writing and return.
  task<bool> write(const M& m) {
    std::string bytes;
    if (!m.SerializeToString(&bytes))
      co_return false;
    co_return co_await m_w.write(std::move(bytes));
  }

 private:
  detail::message_writer& m_w;
};

/// A client-streaming method's way in: read() takes the next request. Threading: the
/// method's task, one read at a time.
template <message M>
class reader {
 public:
  explicit reader(detail::message_reader& r) noexcept : m_r(r) {}
  /// The next request into `m`: true; false at the end of the requests (status() ok) or on
  /// an error (status() says which: return it).
  task<bool> read(M& m) {
    std::string bytes;
    const bool got = co_await m_r.next(bytes);
    if (!got)
      co_return false;
    if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      m_bad = grpc::status{status_code::internal, "a request message does not parse"};
      co_return false;
    }
    co_return true;
  }
  /// Why read() returned false (ok at the end of the requests).
  const grpc::status& status() const noexcept { return m_bad.ok() ? m_r.status() : m_bad; }

 private:
  detail::message_reader& m_r;
  grpc::status m_bad;
};

/// Limits of a service's calls.
struct service_options {
  /// A request message larger than this ends the call with RESOURCE_EXHAUSTED (gRPC's
  /// default: 4 MiB).
  std::size_t max_receive_message = 4u << 20;
  /// A reply larger than this ends the call with RESOURCE_EXHAUSTED instead of being sent.
  std::size_t max_send_message = 4u << 20;
};

/// A set of gRPC methods (see the file comment).
class service {
 public:
  explicit service(service_options opts = {}) : m_opts(opts) {}

  /// A unary method: `fn(const Req&, Rep&, call_context&) -> task<status>` fills the reply
  /// and returns the status (the reply is sent only with ok). `path` is
  /// "package.Service/Method".
  template <message Req, message Rep, class F>
    requires std::is_invocable_r_v<task<status>, F&, const Req&, Rep&, call_context&>
  void unary(std::string path, F fn) {
    auto typed = std::make_shared<detail::typed_unary<Req, Rep>>();
    typed->fn = std::move(fn);
    add_unary(
        std::move(path),
        [typed](std::string_view in, std::string& out, call_context& ctx) -> task<status> {
          Req req;
          if (!req.ParseFromArray(in.data(), static_cast<int>(in.size())))
            co_return status{status_code::internal, "the request message does not parse"};
          Rep rep;
          status st = co_await typed->fn(req, rep, ctx);
          if (st.ok())
            st = detail::serialize(rep, out);
          co_return st;
        },
        typed, &typeid(Req), &typeid(Rep));
  }

  /// The unary method at `path` for in-process calls (local_method), or null when there
  /// is none with these message types.
  template <message Req, message Rep>
  const std::function<task<status>(const Req&, Rep&, call_context&)>* local_unary(std::string_view path) const {
    for (const auto& m : m_methods)
      if (m->k == kind::unary && path_is(m->path, path) && *m->req_type == typeid(Req) && *m->rep_type == typeid(Rep))
        return &static_cast<const detail::typed_unary<Req, Rep>*>(m->typed.get())->fn;
    return nullptr;
  }

  /// A server-streaming method: `fn(const Req&, writer<Rep>&, call_context&) ->
  /// task<status>` writes any number of replies, then returns the status.
  template <message Req, message Rep, class F>
    requires std::is_invocable_r_v<task<status>, F&, const Req&, writer<Rep>&, call_context&>
  void server_stream(std::string path, F fn) {
    add_server_stream(std::move(path), [fn = std::move(fn)](std::string_view in, detail::message_writer& w,
                                                            call_context& ctx) -> task<status> {
      Req req;
      if (!req.ParseFromArray(in.data(), static_cast<int>(in.size())))
        co_return status{status_code::internal, "the request message does not parse"};
      writer<Rep> out(w);
      co_return co_await fn(req, out, ctx);
    });
  }

  /// A client-streaming method: `fn(reader<Req>&, Rep&, call_context&) -> task<status>`
  /// reads the requests (a bounded window of them is held, whatever their number), fills
  /// the reply and returns the status.
  template <message Req, message Rep, class F>
    requires std::is_invocable_r_v<task<status>, F&, reader<Req>&, Rep&, call_context&>
  void client_stream(std::string path, F fn) {
    add_client_stream(std::move(path), [fn = std::move(fn)](detail::message_reader& r, std::string& out,
                                                            call_context& ctx) -> task<status> {
      reader<Req> in(r);
      Rep rep;
      status st = co_await fn(in, rep, ctx);
      if (st.ok())
        st = detail::serialize(rep, out);
      co_return st;
    });
  }

  /// Adds every method to `r` as a POST route and (with `fallback`) answers a gRPC call of
  /// any other path UNIMPLEMENTED (router::otherwise: other requests no route matches
  /// still get 404 / 405). The service must outlive `r`'s use. Not thread-safe (before
  /// serving).
  void mount(http::router& r, bool fallback = true) const;

  /// The method paths, in order added ("package.Service/Method").
  std::vector<std::string> methods() const;

 private:
  enum class kind : std::uint8_t { unary, server_stream, client_stream };
  struct method {
    std::string path;
    kind k;
    detail::unary_fn unary;
    detail::server_stream_fn server_stream;
    detail::client_stream_fn client_stream;
    std::shared_ptr<const void> typed;        // unary: the detail::typed_unary<Req, Rep>
    const std::type_info* req_type = nullptr;  // ... and its message types
    const std::type_info* rep_type = nullptr;
  };
  /// `a` ("pkg.Svc/M" or "/pkg.Svc/M") names the same method as `b`.
  static bool path_is(std::string_view a, std::string_view b) noexcept {
    if (!a.empty() && a.front() == '/')
      a.remove_prefix(1);
    if (!b.empty() && b.front() == '/')
      b.remove_prefix(1);
    return a == b;
  }
  void add_unary(std::string path, detail::unary_fn fn, std::shared_ptr<const void> typed = nullptr,
                 const std::type_info* req = nullptr, const std::type_info* rep = nullptr);
  void add_server_stream(std::string path, detail::server_stream_fn fn);
  void add_client_stream(std::string path, detail::client_stream_fn fn);
  task<http::response> call(const method& m, const http::request& req) const;

  service_options m_opts;
  std::vector<std::unique_ptr<method>> m_methods;  // stable addresses: routes point at them
};

/// A unary method called in the same process: the request and reply objects go to the
/// method as they are — no HTTP/2, no serialization, no copy — so services of one process
/// call each other at the cost of a coroutine call.
///
///     saturn::grpc::service svc;  // ... with benchmark.BenchmarkService/GetSum added
///     saturn::grpc::local_method<benchmark::SumRequest, benchmark::SumReply> sum(svc, "benchmark.BenchmarkService/GetSum");
///     benchmark::SumRequest in;
///     benchmark::SumReply out;
///     saturn::task<saturn::grpc::status> call = sum(in, out);  // co_await it from a task
///
/// Threading: any task, any number at once; `svc` must outlive it. A call has no deadline
/// of its own (the caller's cancellation reaches the method's awaits, as for any awaited
/// task) and an empty call_context (no metadata).
template <message Req, message Rep>
class local_method {
 public:
  /// The method `path` of `svc`; std::invalid_argument when `svc` has no unary method
  /// there with these message types.
  local_method(const service& svc, std::string_view path) : m_fn(svc.local_unary<Req, Rep>(path)) {
    if (m_fn == nullptr)
      throw std::invalid_argument("grpc::local_method: no unary method " + std::string(path) +
                                  " with these message types");
  }
  /// Calls the method with a context of the caller's (one frame: the method's own).
  task<status> operator()(const Req& in, Rep& out, call_context& ctx) const { return (*m_fn)(in, out, ctx); }
  /// Calls the method with an empty context.
  task<status> operator()(const Req& in, Rep& out) const {
    call_context ctx(empty_request());
    co_return co_await (*m_fn)(in, out, ctx);
  }
  /// The request an in-process call's context shows (no fields).
  static const http::request& empty_request() noexcept {
    static const http::request none{};
    return none;
  }

 private:
  const std::function<task<status>(const Req&, Rep&, call_context&)>* m_fn;
};

}  // namespace saturn::grpc
