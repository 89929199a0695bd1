// The WebSocket frame codec: header parsing with the server role's checks, word-at-a-time
// unmasking, server frame headers, and the error category of close codes.
#include <saturn/http/websocket/frame.hpp>

#include <cstring>
#include <string>

namespace saturn::http::websocket {

namespace {

class ws_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "websocket"; }
  std::string message(int code) const override {
    switch (code) {
      case close_code::normal: return "closed normally";
      case close_code::going_away: return "going away";
      case close_code::protocol_error: return "protocol error";
      case close_code::unsupported_data: return "unsupported data";
      case close_code::no_status: return "closed without a status code";
      case close_code::abnormal: return "connection closed without a close frame";
      case close_code::invalid_payload: return "invalid UTF-8 in a text message";
      case close_code::policy_violation: return "policy violation";
      case close_code::message_too_big: return "message too big";
      case close_code::internal_error: return "internal error";
      default: return "closed with code " + std::to_string(code);
    }
  }
};

header_parse refuse(const char* reason) noexcept {
  header_parse r;
  r.state = header_parse::status::error;
  r.close_code = close_code::protocol_error;
  r.reason = reason;
  return r;
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const ws_category c;
  return c;
}

header_parse parse_frame_header(std::span<const std::byte> in) noexcept {
  header_parse r;
  if (in.empty())
    return r;
  const auto b0 = std::to_integer<std::uint8_t>(in[0]);
  if ((b0 & 0x70) != 0)
    return refuse("websocket: reserved bit set without a negotiated extension");
  const std::uint8_t op = b0 & 0x0F;
  if ((op > 0x2 && op < 0x8) || op > 0xA)
    return refuse("websocket: reserved opcode");
  frame_header& h = r.header;
  h.fin = (b0 & 0x80) != 0;
  h.op = static_cast<opcode>(op);
  if (is_control(h.op) && !h.fin)
    return refuse("websocket: fragmented control frame");
  if (in.size() < 2)
    return r;
  const auto b1 = std::to_integer<std::uint8_t>(in[1]);
  h.masked = (b1 & 0x80) != 0;
  if (!h.masked)
    return refuse("websocket: client frame not masked");
  const std::uint8_t len7 = b1 & 0x7F;
  if (is_control(h.op) && len7 > max_control_payload)
    return refuse("websocket: control frame payload over 125 bytes");
  std::size_t n = 2;
  if (len7 == 126) {
    if (in.size() < 4)
      return r;
    h.length = (std::to_integer<std::uint64_t>(in[2]) << 8) | std::to_integer<std::uint64_t>(in[3]);
    n = 4;
  } else if (len7 == 127) {
    if (in.size() < 3)
      return r;
    if ((std::to_integer<std::uint8_t>(in[2]) & 0x80) != 0)
      return refuse("websocket: 64-bit payload length with the most significant bit set");
    if (in.size() < 10)
      return r;
    for (std::size_t i = 2; i < 10; ++i)
      h.length = (h.length << 8) | std::to_integer<std::uint64_t>(in[i]);
    n = 10;
  } else {
    h.length = len7;
  }
  if (in.size() < n + 4)
    return r;
  std::memcpy(h.mask.data(), in.data() + n, 4);
  h.size = static_cast<std::uint8_t>(n + 4);
  r.state = header_parse::status::ok;
  return r;
}

void unmask(std::byte* data, std::size_t n, std::array<std::byte, 4> key, std::size_t phase) noexcept {
  // The key repeated over eight bytes, rotated to `phase`: the same bytes in memory order
  // on any endianness, since it is assembled bytewise and loaded with memcpy.
  std::byte k8[8];
  for (std::size_t i = 0; i < 8; ++i)
    k8[i] = key[(phase + i) & 3];
  std::uint64_t k;
  std::memcpy(&k, k8, 8);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, data + i, 32);
    w[0] ^= k;
    w[1] ^= k;
    w[2] ^= k;
    w[3] ^= k;
    std::memcpy(data + i, w, 32);
  }
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    w ^= k;
    std::memcpy(data + i, &w, 8);
  }
  for (; i < n; ++i)
    data[i] ^= k8[i & 7];
}

std::size_t write_frame_header(std::byte* out, opcode op, std::uint64_t length, bool fin) noexcept {
  out[0] = static_cast<std::byte>((fin ? 0x80 : 0x00) | static_cast<std::uint8_t>(op));
  if (length < 126) {
    out[1] = static_cast<std::byte>(length);
    return 2;
  }
  if (length <= 0xFFFF) {
    out[1] = std::byte{126};
    out[2] = static_cast<std::byte>(length >> 8);
    out[3] = static_cast<std::byte>(length);
    return 4;
  }
  out[1] = std::byte{127};
  for (int i = 0; i < 8; ++i)
    out[2 + i] = static_cast<std::byte>(length >> (56 - 8 * i));
  return 10;
}

}  // namespace saturn::http::websocket
