/// \file
/// `grpc::channel`: a gRPC client, so saturn services can call each other (and any gRPC
/// server) — many calls at once on one HTTP/2 connection per target, deadlines that cancel
/// the call on the server too (RST_STREAM), and the same messages and status as the server
/// side (service.hpp).
///
///     saturn::grpc::channel ch("localhost:50051");  // h2c by prior knowledge
///     benchmark::SumRequest in;
///     benchmark::SumReply out;
///     saturn::task<saturn::grpc::status> call =
///         ch.unary("benchmark.BenchmarkService/GetSum", in, out, {.timeout = std::chrono::seconds(1)});
///
/// Over TLS (h2, chosen by ALPN): give the channel a client context that offers h2, and the
/// server name to send as SNI and to verify the certificate against (by default the
/// target's host):
///
///     auto ctx = saturn::tls::context::client({.ca_file = "ca.pem", .alpn = {"h2"}});
///     if (!ctx) return;  // "tls CA file ca.pem: ..."
///     saturn::grpc::channel_options opts;
///     opts.tls = saturn::grpc::channel_tls{.context = *ctx, .server_name = "api.example.com"};
///     saturn::grpc::channel secure("10.0.0.7:443", opts);
///
/// The connection is made at the first call (the name resolved on the ring, net::connect;
/// over TLS the handshake, and a check that the server chose h2) and again after it fails;
/// a call that finds no connection ends with UNAVAILABLE and says why — "connect ...",
/// "TLS to host:443: the server's certificate failed verification: hostname mismatch",
/// "... the TLS handshake did not finish within 5000 ms", "... the server chose ALPN
/// \"http/1.1\", not h2 ...". TLS and cleartext channels behave alike otherwise: one
/// connection shared by every call, the same deadlines and cancellation.
///
/// Flow control: a call's receive window opens only as its caller takes the replies (no
/// WINDOW_UPDATE for bytes the caller has not consumed), so a server-streaming call whose
/// reader is slow holds at most channel_options::stream_window of unread replies (plus
/// one partial message): the server is held back, the client's memory stays bounded. All
/// calls of a connection share connection_window.
///
/// Threading: calls may be made from any task on any worker, concurrently; the channel's
/// connection task runs on the scheduler of the task that made the first call. Destroying
/// the channel closes its connection; calls in flight end with UNAVAILABLE.
#pragma once

#include <saturn/grpc/service.hpp>
#include <saturn/grpc/status.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace saturn::grpc {

/// A channel's TLS: h2 over TLS, chosen by ALPN.
struct channel_tls {
  /// A client context (tls::context::client) that offers h2 in its ALPN list; it says
  /// which CAs are trusted and whether to verify at all.
  tls::context context;
  /// Sent as SNI and checked against the server's certificate (a DNS name or an IP
  /// address). Empty: the target's host.
  std::string server_name{};
  /// The whole TLS handshake, after the TCP connect.
  std::chrono::milliseconds handshake_timeout{5000};
};

/// How a channel connects and what its calls accept.
struct channel_options {
  std::chrono::milliseconds connect_timeout{5000};  ///< the whole connect (resolve included)
  std::size_t max_receive_message = 4u << 20;       ///< a larger reply: RESOURCE_EXHAUSTED
  /// TLS (h2 by ALPN); none: cleartext, h2c by prior knowledge.
  std::optional<channel_tls> tls{};
  /// Each call's receive window: reply bytes the server may send ahead of the caller
  /// (at least 16 KiB).
  std::uint32_t stream_window = 1u << 20;
  /// The connection's receive window, shared by all its calls.
  std::uint32_t connection_window = 8u << 20;
};

/// One call's options.
struct call_options {
  /// The call's deadline from now (sent as grpc-timeout; when it passes the call is
  /// reset and ends with DEADLINE_EXCEEDED). None: no deadline.
  std::optional<std::chrono::nanoseconds> timeout{};
  /// Request metadata (lower-case names).
  std::vector<std::pair<std::string, std::string>> metadata{};
};

namespace detail {
struct client_conn;
/// What a call gives back besides its messages: the status and the trailing metadata.
struct call_outcome {
  grpc::status st;
  std::vector<std::pair<std::string, std::string>> trailers;
};
}  // namespace detail

/// See the file comment.
class channel {
 public:
  /// A channel to `target` ("host:port"); nothing is connected yet.
  explicit channel(std::string target, channel_options opts = {});
  ~channel();
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  /// A unary call: `in` is sent, `out` filled when the status is ok.
  template <message Req, message Rep>
  task<status> unary(std::string_view method, const Req& in, Rep& out, call_options opts = {}) {
    std::vector<std::string> requests(1);
    if (!in.SerializeToString(&requests[0]))
      co_return status{status_code::internal, "the request could not be serialized"};
    std::vector<std::string> replies;
    status st = co_await call(method, std::move(requests), replies, std::move(opts), nullptr);
    if (!st.ok())
      co_return st;
    if (replies.size() != 1)
      co_return status{status_code::internal, "a unary call was answered with " + std::to_string(replies.size()) +
                                                  " messages"};
    if (!out.ParseFromArray(replies[0].data(), static_cast<int>(replies[0].size())))
      co_return status{status_code::internal, "the reply does not parse"};
    co_return st;
  }

  /// A server-streaming call: `on_reply(Rep&)` runs for each reply as it arrives, in the
  /// calling task (return false to cancel the call; it then ends with CANCELLED). Name the
  /// reply type: `ch.server_stream<Reply>(method, in, on_reply)`. `on_reply` may also be a
  /// coroutine (`-> task<bool>`): the next reply is taken when it has finished, and the
  /// server waits for a slow one (see Flow control above); the call's deadline cancels its
  /// awaits too.
  template <message Rep, message Req, class F>
    requires std::is_invocable_r_v<bool, F&, Rep&> || std::is_invocable_r_v<task<bool>, F&, Rep&>
  task<status> server_stream(std::string_view method, const Req& in, F on_reply, call_options opts = {}) {
    std::vector<std::string> requests(1);
    if (!in.SerializeToString(&requests[0]))
      co_return status{status_code::internal, "the request could not be serialized"};
    std::vector<std::string> unused;
    if constexpr (std::is_invocable_r_v<task<bool>, F&, Rep&>) {
      std::function<task<bool>(std::string&)> each = [&on_reply](std::string& bytes) -> task<bool> {
        Rep r;
        if (!r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
          co_return false;
        auto handled = on_reply(r);
        const bool more = co_await std::move(handled);
        co_return more;
      };
      co_return co_await run(method, std::move(requests), unused, std::move(opts), nullptr, &each, nullptr);
    } else {
      std::function<bool(std::string&)> each = [&on_reply](std::string& bytes) {
        Rep r;
        if (!r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
          return false;
        return static_cast<bool>(on_reply(r));
      };
      co_return co_await run(method, std::move(requests), unused, std::move(opts), &each, nullptr, nullptr);
    }
  }

  /// A client-streaming call: every message of `in` is sent, `out` filled when the status
  /// is ok.
  template <message Req, message Rep>
  task<status> client_stream(std::string_view method, std::span<const Req> in, Rep& out, call_options opts = {}) {
    std::vector<std::string> requests(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
      if (!in[i].SerializeToString(&requests[i]))
        co_return status{status_code::internal, "a request could not be serialized"};
    std::vector<std::string> replies;
    status st = co_await call(method, std::move(requests), replies, std::move(opts), nullptr);
    if (!st.ok())
      co_return st;
    if (replies.size() != 1 || !out.ParseFromArray(replies[0].data(), static_cast<int>(replies[0].size())))
      co_return status{status_code::internal, "the reply is not one message that parses"};
    co_return st;
  }

  /// The target this channel calls ("host:port").
  const std::string& target() const noexcept { return m_target; }

  /// The untyped call under the others: `requests` (serialized) are sent, the replies
  /// (serialized) appended to `replies` — or, with `each`, handed to it one at a time
  /// (false from it cancels the call). `trailers`, if given, receives the trailing
  /// metadata.
  task<status> call(std::string_view method, std::vector<std::string> requests, std::vector<std::string>& replies,
                    call_options opts, std::function<bool(std::string&)>* each,
                    std::vector<std::pair<std::string, std::string>>* trailers = nullptr);

 private:
  task<status> run(std::string_view method, std::vector<std::string> requests, std::vector<std::string>& replies,
                   call_options opts, std::function<bool(std::string&)>* each,
                   std::function<task<bool>(std::string&)>* each_async,
                   std::vector<std::pair<std::string, std::string>>* trailers);

  std::string m_target;
  channel_options m_opts;
  std::shared_ptr<detail::client_conn> m_conn;  // the live connection, if any (under m_mu)
  std::shared_ptr<void> m_mu;                   // a std::mutex, kept out of this header
};

}  // namespace saturn::grpc
