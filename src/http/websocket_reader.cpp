// message_reader: parses client frames out of the receive buffer, assembles fragmented
// messages at the front of it and validates them (see reader.hpp for the buffer layout).
//
// Layout: [0, header_room) spare | assembled message (m_msg_len bytes, while fragmented) |
// unparsed bytes [m_pos, m_end). A single-frame message or a control frame is unmasked in
// place and returned where it lies; m_release says where m_pos moves once the caller is
// done with it. A fragment's payload is moved down to the end of the assembled message
// and the unparsed bytes after it follow, so every move goes to a lower address.
#include <saturn/http/websocket/reader.hpp>

#include <algorithm>
#include <cstring>

namespace saturn::http::websocket {

message_reader::event message_reader::fail(std::uint16_t code, const char* reason) noexcept {
  m_done = true;
  m_final = event{};
  m_final.kind = event_kind::error;
  m_final.code = code;
  m_final.reason = reason;
  return m_final;
}

void message_reader::close_gap(std::size_t to, std::size_t from) noexcept {
  const std::size_t n = m_end - from;
  if (to != from && n != 0)
    std::memmove(m_buf.get() + to, m_buf.get() + from, n);
  m_pos = to;
  m_end = to + n;
}

void message_reader::reserve(std::size_t bytes_from_pos) {
  const std::size_t unparsed = m_end - m_pos;
  const std::size_t need = std::max(bytes_from_pos, unparsed + 1);
  if (m_buf != nullptr && m_cap >= m_pos + need)
    return;
  const std::size_t base = header_room + m_msg_len;  // while fragmented, m_pos == base already
  if (m_buf != nullptr && m_cap >= base + need) {
    close_gap(base, m_pos);
    return;
  }
  std::size_t cap = std::max(base + need, m_opts.initial_buffer);
  if (m_buf != nullptr) {
    // Grow geometrically for a message arriving in many fragments, but not far past the
    // largest message a peer may send.
    const std::size_t ceiling = header_room + m_opts.max_message + 2 * max_header_size;
    cap = std::max(cap, std::min(m_cap * 2, ceiling));
  }
  auto fresh = std::make_unique<std::byte[]>(cap);
  if (m_buf != nullptr) {
    std::memcpy(fresh.get() + header_room, m_buf.get() + header_room, m_msg_len);
    if (unparsed != 0)
      std::memcpy(fresh.get() + base, m_buf.get() + m_pos, unparsed);
  }
  m_buf = std::move(fresh);
  m_cap = cap;
  m_pos = base;
  m_end = base + unparsed;
}

std::span<std::byte> message_reader::prepare() {
  reserve(m_want);
  return {m_buf.get() + m_end, m_cap - m_end};
}

void message_reader::append(std::span<const std::byte> bytes) {
  if (bytes.empty())
    return;
  reserve(m_end - m_pos + bytes.size());
  std::memcpy(m_buf.get() + m_end, bytes.data(), bytes.size());
  m_end += bytes.size();
}

std::span<std::byte> message_reader::frame_before(std::span<const std::byte> payload, std::size_t header_size) noexcept {
  if (m_buf == nullptr || payload.data() != m_buf.get() + m_last_off || payload.size() > m_last_len ||
      header_size > m_last_room)
    return {};
  return {m_buf.get() + m_last_off - header_size, header_size + payload.size()};
}

message_reader::event message_reader::next() noexcept {
  if (m_done)
    return m_final;
  const bool fragmented = m_msg_op != opcode::continuation;
  if (m_release != 0) {
    if (fragmented)
      close_gap(header_room + m_msg_len, m_release);  // a control frame inside the message
    else
      m_pos = m_release;
    m_release = 0;
  }
  m_last_room = 0;
  if (!fragmented && m_pos == m_end) {
    m_pos = m_end = header_room;
    if (m_cap > m_opts.initial_buffer) {  // shrink back after a large message
      m_buf.reset();
      m_cap = 0;
    }
  }
  for (;;) {
    const std::span<const std::byte> in =
        m_buf != nullptr ? std::span<const std::byte>(m_buf.get() + m_pos, m_end - m_pos) : std::span<const std::byte>{};
    const header_parse hp = parse_frame_header(in);
    if (hp.state == header_parse::status::error)
      return fail(hp.close_code, hp.reason);
    if (hp.state == header_parse::status::incomplete) {
      m_want = max_header_size;
      return event{};
    }
    const frame_header& h = hp.header;
    const bool open = m_msg_op != opcode::continuation;
    if (!is_control(h.op)) {
      if (h.op == opcode::continuation && !open)
        return fail(close_code::protocol_error, "websocket: continuation frame without a message to continue");
      if (h.op != opcode::continuation && open)
        return fail(close_code::protocol_error, "websocket: new data frame inside a fragmented message");
      if (h.length > m_opts.max_message - m_msg_len)
        return fail(close_code::message_too_big, "websocket: message over the size limit");
    }
    const std::size_t total = h.size + static_cast<std::size_t>(h.length);
    if (m_end - m_pos < total) {
      m_want = total;
      return event{};
    }
    m_want = max_header_size;
    std::byte* payload = m_buf.get() + m_pos + h.size;
    const auto len = static_cast<std::size_t>(h.length);
    unmask(payload, len, h.mask);
    if (is_control(h.op)) {
      m_last_off = m_pos + h.size;
      m_last_len = len;
      m_last_room = open ? h.size : m_last_off;
      m_release = m_pos + total;
      if (h.op == opcode::close)
        return on_close_frame({payload, len});
      event e;
      e.kind = h.op == opcode::ping ? event_kind::ping : event_kind::pong;
      e.op = h.op;
      e.payload = {payload, len};
      return e;
    }
    const opcode op = open ? m_msg_op : h.op;
    if (op == opcode::text && m_opts.validate_utf8) {
      if (!m_utf8.feed({payload, len}))
        return fail(close_code::invalid_payload, "websocket: invalid UTF-8 in a text message");
      if (h.fin && !m_utf8.complete())
        return fail(close_code::invalid_payload, "websocket: text message ends inside a UTF-8 sequence");
    }
    event e;
    e.kind = event_kind::message;
    e.op = op;
    if (h.fin && !open) {  // a whole message in one frame: hand it out where it lies
      m_utf8.reset();
      m_last_off = m_pos + h.size;
      m_last_len = len;
      m_last_room = m_last_off;
      m_release = m_pos + total;
      e.payload = {payload, len};
      return e;
    }
    // A fragment: append its payload to the message, then the unparsed bytes after it.
    const std::size_t dst = header_room + m_msg_len;
    if (len != 0)
      std::memmove(m_buf.get() + dst, payload, len);
    m_msg_len += len;
    close_gap(dst + len, m_pos + total);
    if (!h.fin) {
      m_msg_op = op;
      continue;
    }
    m_utf8.reset();
    m_last_off = header_room;
    m_last_len = m_msg_len;
    m_last_room = header_room;
    e.payload = {m_buf.get() + header_room, m_msg_len};
    m_msg_op = opcode::continuation;
    m_msg_len = 0;
    return e;
  }
}

message_reader::event message_reader::on_close_frame(std::span<std::byte> payload) noexcept {
  if (payload.size() == 1)
    return fail(close_code::protocol_error, "websocket: close frame with a 1-byte payload");
  std::uint16_t code = close_code::no_status;
  if (payload.size() >= 2) {
    code = static_cast<std::uint16_t>((std::to_integer<unsigned>(payload[0]) << 8) | std::to_integer<unsigned>(payload[1]));
    if (!valid_close_code(code))
      return fail(close_code::protocol_error, "websocket: close frame with an invalid status code");
    payload = payload.subspan(2);
    if (m_opts.validate_utf8) {
      utf8_validator v;
      v.feed(payload);
      if (!v.complete())
        return fail(close_code::invalid_payload, "websocket: close reason is not UTF-8");
    }
  }
  m_done = true;
  m_final = event{};
  m_final.kind = event_kind::close;
  m_final.op = opcode::close;
  m_final.code = code;
  m_final.payload = payload;
  return m_final;
}

}  // namespace saturn::http::websocket
