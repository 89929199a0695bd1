// What runs on an HTTP/2 stream's own task: its handler, a streamed answer's producer
// (through h2_writer), and a streamed request body's reads (h2_body). The task reaches the
// connection only through h2_session::post and the stream's mutex-guarded fields.
#include "http/h2_session.hpp"

#include <saturn/task/await_under.hpp>
#include <saturn/task/time.hpp>

#include <exception>
#include <optional>
#include <system_error>

namespace saturn::http::detail {

namespace {

/// A streamed answer's body on its way out: bytes go to the stream's out_pending, which
/// the connection frames as DATA within the stream's flow-control window; a write waits
/// while a batch (16 KiB) is pending, so a slow client holds the producer, not memory.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, and body_writer's destructor is protected
class h2_writer final : public body_writer {
 public:
  static constexpr std::size_t k_batch = 16 * 1024;

  h2_writer(h2_session& s, h2_stream& st, std::optional<std::uint64_t> length) noexcept
      : m_s(s), m_st(st), m_length(length), m_left(length.value_or(0)) {}

  result<void> append(std::string_view bytes) override {
    if (bytes.empty())
      return result<void>{};
    if (m_length && bytes.size() > m_left)
      return error{std::make_error_code(std::errc::message_size), "write response body"};
    std::lock_guard lock(m_st.mu);
    if (m_st.gone)
      return error{std::make_error_code(std::errc::connection_reset), "write response body"};
    m_st.out_pending.append(bytes);
    if (m_length)
      m_left -= bytes.size();
    return result<void>{};
  }

  task<result<void>> send(result<void> prior, bool all) override {
    if (!prior)
      co_return prior;
    bool posted = false;
    for (;;) {
      {
        std::lock_guard lock(m_st.mu);
        if (m_st.gone)
          co_return error{std::make_error_code(std::errc::connection_reset), "write response body"};
        const std::size_t pending = m_st.out_pending.size() - m_st.out_taken;
        if (pending == 0 || (!all && pending < k_batch))
          co_return result<void>{};
        m_st.out_room.reset();
      }
      if (!posted) {
        m_s.post(&m_st, h2_event::resume);
        posted = true;
      }
      auto w = co_await m_st.out_room.wait();
      if (!w)
        co_return error{std::make_error_code(std::errc::operation_canceled), "write response body"};
    }
  }

  void add_trailer(text_value name, text_value value) override {
    m_trailers.add_trailer(std::move(name), std::move(value));  // response's checks
  }

  /// After the producer returned: false if a declared length was not written.
  bool finish() const noexcept { return !m_length || m_left == 0; }
  /// The producer's trailer() fields.
  const std::vector<std::pair<text_value, text_value>>& trailers() const noexcept { return m_trailers.trailers(); }

 private:
  h2_session& m_s;
  h2_stream& m_st;
  std::optional<std::uint64_t> m_length;
  std::uint64_t m_left;
  response m_trailers;  // holds the trailer() fields
};

}  // namespace

task<result<std::string_view>> h2_body::next() {
  if (m_handed != 0) {
    // The last piece was taken: its bytes may come in again.
    m_s.post(&m_st, h2_event::consumed, m_handed);
    m_handed = 0;
  }
  m_piece.clear();
  for (;;) {
    bool failed = false, over = false, end = false;
    {
      std::lock_guard lock(m_st.mu);
      if (!m_st.in_pending.empty()) {
        m_piece.swap(m_st.in_pending);
      } else if (m_st.in_failed) {
        failed = true;
        over = m_st.in_over;
      } else if (m_st.in_end) {
        end = true;
      } else {
        m_st.in_ready.reset();
      }
    }
    if (!m_piece.empty()) {
      m_handed = m_piece.size();
      co_return std::string_view(m_piece);
    }
    if (failed) {
      co_return error{std::make_error_code(over ? std::errc::message_size : std::errc::connection_reset),
                      "read request body"};
    }
    if (end)
      co_return std::string_view();
    auto w = co_await m_st.in_ready.wait();
    if (!w)
      co_return error{std::make_error_code(std::errc::operation_canceled), "read request body"};
  }
}

task<void> run_h2_stream(h2_session& s, h2_stream& st) {
  std::optional<response> resp;
  try {
    task<response> t = (*st.match.fn)(st.req, st.match.params);
    // lifetime: t owns the handler's frame until the end of this block.
    resp.emplace(co_await await_under(t, st.ctx));
  } catch (const std::exception&) {
    resp.reset();
  }
  if (!resp)
    resp.emplace(500, "text/plain", "handler failed\n");
  st.resp = std::move(*resp);
  const bool produce = st.resp.streamed() && h2_sends_body(st);
  s.post(&st, h2_event::head);
  if (produce) {
    h2_writer w(s, st, st.resp.stream_length());
    bool ok = false;
    try {
      task<result<void>> t = (*st.resp.producer())(w);
      result<void> r = co_await await_under(t, st.ctx);
      ok = r.has_value();
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && w.finish();
    {
      std::lock_guard lock(st.mu);
      st.out_trailers = w.trailers();
      st.out_done = true;
      st.out_ok = ok;
    }
    s.post(&st, h2_event::resume);
  }
  s.post(&st, h2_event::finished);  // the last touch of `st`
}

}  // namespace saturn::http::detail
