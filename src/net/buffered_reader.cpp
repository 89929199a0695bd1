// buffered_reader's byte handling (the part that does not depend on the stream type).
#include <saturn/net/buffered_reader.hpp>

#include <algorithm>
#include <cstring>

namespace saturn::net::detail {

read_buffer::read_buffer(const buffered_reader_options& o) noexcept
    : m_initial(std::max<std::size_t>(o.initial_size, 1)), m_max(std::max<std::size_t>(o.max_size, 2)) {
  m_initial = std::min(m_initial, m_max);
}

std::span<std::byte> read_buffer::prepare(std::size_t total) {
  const std::size_t held = size();
  if (held == 0)
    m_begin = m_end = 0;
  // Compact when the record would not fit behind m_begin, or the free tail is small.
  if (m_begin > 0 && (m_cap - m_begin < total || m_cap - m_end < m_cap / 4)) {
    std::memmove(m_data.get(), m_data.get() + m_begin, held);
    m_begin = 0;
    m_end = held;
  }
  if (m_cap < total) {
    std::size_t cap = std::max(m_cap * 2, m_initial);
    while (cap < total)
      cap *= 2;
    cap = std::min(cap, m_max);
    std::unique_ptr<char[]> bigger(new char[cap]);
    if (held > 0)
      std::memcpy(bigger.get(), m_data.get() + m_begin, held);
    m_data = std::move(bigger);
    m_cap = cap;
    m_begin = 0;
    m_end = held;
  }
  return {reinterpret_cast<std::byte*>(m_data.get() + m_end), m_cap - m_end};
}

std::size_t find_delimiter(std::string_view buf, std::string_view delim, std::size_t from) noexcept {
  if (from >= buf.size())
    return std::string_view::npos;
  const std::size_t at = delim.size() == 1 ? buf.find(delim[0], from) : buf.find(delim, from);
  return at == std::string_view::npos ? at : at + delim.size();
}

}  // namespace saturn::net::detail
