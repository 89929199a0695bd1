// One HTTP/2 connection's protocol state, without I/O: the nghttp2 server session, the
// streams it has open, and what the connection task must do next. The connection task
// (h2_connection.cpp) feeds it the bytes the ring received (receive()), runs the handlers
// of the streams it hands out (take_ready()), and sends what it produces (produce()).
//
// Threading: nghttp2's session is not a concurrent object, so only the connection task
// touches it (every member not marked otherwise). Handlers run as their own tasks, on
// any worker; they reach the session only through post(), which queues an event under a
// mutex and wakes the connection task (`wake`). A stream's own state that a handler and
// the connection both use (a streamed body in or out) is under the stream's mutex.
#pragma once

#include <saturn/http/h2_options.hpp>
#include <saturn/http/parser.hpp>
#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/router.hpp>
#include <saturn/sync/event.hpp>
#include <saturn/task/scheduler.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nghttp2/nghttp2.h>

namespace saturn::http::detail {

struct server_metrics;
class h2_session;
struct h2_stream;

/// A streamed request body's source (request_body.hpp): the pieces the connection task
/// queued on the stream, handed to the handler one at a time; taking a piece gives its
/// bytes back to the stream's flow-control window (h2_stream.cpp).
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and body_source's destructor is protected
class h2_body final : public body_source {
 public:
  h2_body(h2_session& s, h2_stream& st) noexcept : m_s(s), m_st(st) {}
  task<result<std::string_view>> next() override;
  /// Back to a new stream's state (a reused stream).
  void reset() noexcept {
    m_piece.clear();
    m_handed = 0;
  }

 private:
  h2_session& m_s;
  h2_stream& m_st;
  std::string m_piece;        // the piece handed out last
  std::size_t m_handed = 0;   // its size, not yet given back to the window
};

/// One stream: its request (views into `strings`), the handler's answer, and a streamed
/// body's state in either direction.
struct h2_stream {
  h2_stream(h2_session& s, std::int32_t stream_id) noexcept : id(stream_id), in_source(s, *this) {}
  h2_stream(const h2_stream&) = delete;
  h2_stream& operator=(const h2_stream&) = delete;

  std::int32_t id;
  // --- request head (connection task) -------------------------------------------------
  struct field_ref {
    std::uint32_t name_off, name_len, value_off, value_len;
  };
  std::string strings;              // every name and value received, back to back
  std::vector<field_ref> fields;    // regular fields, in order
  std::vector<header_field> header_views;  // req's header fields (host first when :authority stood for it)
  field_ref method{}, path{}, authority{};
  bool has_method = false, has_path = false, has_authority = false, has_host = false;
  std::size_t head_bytes = 0;       // RFC 9113 §6.5.2's size: names + values + 32 each
  int refuse = 0;                   // an answer decided before any handler (431, 413)
  request req;
  route_match match;
  std::string path_scratch;
  // --- request body ---------------------------------------------------------------------
  bool remote_done = false;         // END_STREAM received
  bool streamed_in = false;         // the route streams its body: the handler started at the head
  std::uint64_t body_limit = 0;
  std::uint64_t body_received = 0;
  std::uint64_t body_returned = 0;  // of it, given back to the window (nghttp2_session_consume)
  bool window_settled = false;      // closed: what was not given back went to the connection's window
  std::string body;                 // a buffered body
  h2_body in_source;                // a streamed body's source
  // --- handler and answer ---------------------------------------------------------------
  bool started = false;             // the handler's task was handed out
  bool finished = false;            // ... and has ended (its last touch of the stream)
  bool submitted = false;           // the response head went to nghttp2
  bool closed = false;              // nghttp2 closed the stream
  bool rst_after_answer = false;    // answered before the body ended (the rest is dropped)
  bool answer_out = false;          // ... and the answer's last frame went out
  std::uint64_t dropped = 0;        // body bytes dropped after an early answer
  response resp;
  std::size_t resp_off = 0;         // bytes of resp.body() handed to nghttp2
  std::int64_t t0 = 0;              // server_metrics::sample_start
  std::stop_source stop;            // cancels the handler: RST_STREAM, stop, connection end
  task_context ctx;                 // the handler's: `stop`'s token
  // --- shared with the handler's task (under `mu`) ---------------------------------------
  std::mutex mu;
  event in_ready;                   // a streamed body: a piece (or its end) arrived
  event out_room;                   // a streamed answer: its pending bytes were taken
  std::string in_pending;           // a streamed body's bytes not handed to the handler yet
  bool in_end = false, in_failed = false;
  bool in_over = false;             // in_failed because the body passed body_limit
  bool gone = false;                 // the stream or the connection ended: reads and writes fail
  std::string out_pending;          // a streamed answer's bytes not framed yet
  std::size_t out_taken = 0;        // of out_pending, framed already
  std::vector<std::pair<text_value, text_value>> out_trailers;  // the producer's trailer() fields
  bool out_done = false;            // the producer returned (the body is complete or failed)
  bool out_ok = true;               // ... successfully
  bool deferred = false;            // nghttp2 waits for out_pending (resume_data needed)
  std::size_t slot = 0;             // index in h2_session's list of streams
};

/// True when `st`'s answer has a body to send (not HEAD, not 1xx / 204 / 304).
bool h2_sends_body(const h2_stream& st) noexcept;

/// The task that runs `st`'s handler (and a streamed answer's producer) and posts what it
/// did to `s` (h2_stream.cpp). Its last touch of `st` is the `finished` post.
task<void> run_h2_stream(h2_session& s, h2_stream& st);

/// What a handler's task tells the connection (post()).
enum class h2_event : std::uint8_t {
  head,      ///< the handler returned: submit its response
  resume,    ///< a streamed answer has bytes (or ended): resume its DATA
  consumed,  ///< a streamed body's handler took `n` bytes: open the window by them
  finished,  ///< the stream's task ended (its last touch)
};

/// The nghttp2 session of one connection and its streams (see the file comment).
class h2_session {
 public:
  h2_session(const router& r, const parser_limits& limits, const h2_options& opts, std::string_view server_name,
             server_metrics& stats, const task_context& parent);
  ~h2_session();
  h2_session(const h2_session&) = delete;
  h2_session& operator=(const h2_session&) = delete;

  /// False if nghttp2 could not be set up (memory).
  bool ok() const noexcept { return m_session != nullptr; }

  /// Feeds received bytes (the preface first). False when the connection must end
  /// (a connection error: its GOAWAY is queued; produce() it before closing).
  bool receive(std::span<const std::byte> bytes);
  /// Appends what the session has to send to `out`, about `budget` bytes at most.
  /// False on a fatal error.
  bool produce(std::string& out, std::size_t budget);
  /// True while the session wants to read or write (else the connection is over).
  bool alive() const noexcept;
  /// Streams whose handler must start now (cleared by the call).
  std::vector<h2_stream*>& ready() noexcept { return m_ready; }
  /// Handles what handlers posted since the last call. Connection task.
  void drain_events();
  /// Stops accepting new streams: GOAWAY(NO_ERROR) with the last stream seen, once.
  /// Connection task.
  void goaway();
  /// Cancels the handlers in flight (they may still answer). Connection task.
  void cancel_running() noexcept;
  /// Cancels every handler (the connection is ending). Connection task.
  void cancel_all() noexcept;
  /// Streams open or with a handler running.
  std::size_t active() const noexcept { return m_live; }
  /// Handlers running.
  std::size_t running() const noexcept { return m_running; }

  /// From a handler's task (any thread): queues `e` for `st` and wakes the connection.
  void post(h2_stream* st, h2_event e, std::size_t n = 0);
  /// Set by post() (and by the transport): the connection task has work.
  event wake;

  const parser_limits& limits() const noexcept { return m_limits; }

  // nghttp2's callbacks (h2_session.cpp), public for the C trampolines only.
  int on_begin_headers(std::int32_t id);
  int on_header(std::int32_t id, std::uint8_t cat, std::string_view name, std::string_view value);
  int on_frame_recv(std::uint8_t type, std::uint8_t flags, std::int32_t id, std::size_t length);
  int on_data_chunk(std::int32_t id, std::string_view data);
  int on_stream_close(std::int32_t id, std::uint32_t code);
  int on_frame_send(std::uint8_t type, std::uint8_t flags, std::int32_t id);
  long read_body(std::int32_t id, std::uint8_t* buf, std::size_t length, std::uint32_t* flags);

 private:
  h2_stream* find(std::int32_t id) const noexcept;
  /// The head is complete: builds the request, routes it, decides what runs.
  void head_done(h2_stream& st);
  /// The request (head and, buffered, body) is complete: hand its handler out.
  void make_ready(h2_stream& st);
  /// Submits an answer (`st.resp`). Connection task.
  void submit(h2_stream& st);
  /// Submits a short error answer decided by the server (431, 413, 500...).
  void answer(h2_stream& st, int status, std::string_view reason);
  void maybe_free(h2_stream* st) noexcept;
  /// At the end of `st`'s body: submits its trailers (the response's, then the
  /// producer's) and says whether there were any (then the DATA must not end the stream).
  bool submit_trailers(h2_stream& st);
  bool count_control() noexcept;

  const router& m_router;
  const parser_limits& m_limits;
  const h2_options& m_opts;
  std::string_view m_server_name;
  server_metrics& m_stats;
  const task_context& m_parent;
  nghttp2_session* m_session = nullptr;
  std::vector<h2_stream*> m_ready;
  std::size_t m_live = 0;     // streams not freed
  std::size_t m_running = 0;  // started, not finished
  std::vector<std::unique_ptr<h2_stream>> m_streams;  // every live stream (unordered)
  std::vector<std::unique_ptr<h2_stream>> m_spare;    // freed streams, kept for reuse
  /// A stream for `id`: a spare one reset (its buffers keep their capacity), or a new one.
  std::unique_ptr<h2_stream> make_stream(std::int32_t id);
  std::vector<std::pair<std::int32_t, std::size_t>> m_consume;  // window to give back after receive()
  bool m_stopping = false;
  // Control-frame flood accounting: frames in the current one-second window.
  std::int64_t m_window_start_ms = 0;
  std::uint32_t m_control = 0;
  // Events posted by handlers (under m_mu).
  struct posted {
    h2_stream* st;
    h2_event e;
    std::size_t n;
  };
  std::mutex m_mu;
  std::vector<posted> m_posted;
  std::vector<posted> m_work;  // drain_events' swap partner
  // submit()'s scratch, reused across answers.
  std::string m_lower;
  std::vector<nghttp2_nv> m_nva;
};

}  // namespace saturn::http::detail
