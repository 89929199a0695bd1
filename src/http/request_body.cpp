// request_body: read / read_all / next_piece over a buffered view or the connection's
// streamed pieces (detail::body_source, implemented in connection.cpp).
#include <saturn/http/request_body.hpp>

#include <cstring>
#include <system_error>

namespace saturn::http {

task<result<std::string_view>> request_body::next_piece() {
  if (!m_pending.empty()) {
    std::string_view p = m_pending;
    m_pending = {};
    co_return p;
  }
  if (m_source == nullptr) {
    if (m_taken)
      co_return std::string_view();
    m_taken = true;
    co_return m_view;
  }
  co_return co_await m_source->next();
}

task<result<std::size_t>> request_body::read(std::span<char> buf) {
  if (buf.empty())
    co_return std::size_t{0};
  if (m_pending.empty()) {
    auto piece = next_piece();
    result<std::string_view> got = co_await std::move(piece);
    if (!got)
      co_return got.err();
    m_pending = *got;
  }
  std::size_t n = m_pending.size() < buf.size() ? m_pending.size() : buf.size();
  if (n > 0)
    std::memcpy(buf.data(), m_pending.data(), n);
  m_pending.remove_prefix(n);
  co_return n;
}

task<result<std::string>> request_body::read_all(std::size_t limit) {
  std::string out;
  if (m_length && *m_length <= limit)
    out.reserve(static_cast<std::size_t>(*m_length));
  for (;;) {
    auto piece = next_piece();
    result<std::string_view> got = co_await std::move(piece);
    if (!got)
      co_return got.err();
    if (got->empty())
      co_return out;
    if (got->size() > limit - out.size())
      co_return error{std::make_error_code(std::errc::message_size), "read request body"};
    out.append(*got);
  }
}

}  // namespace saturn::http
