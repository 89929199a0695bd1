// What the WebSocket tests share: a client-side (masked) frame builder, a parser of server
// frames, and a driver that feeds bytes to a message_reader in chosen pieces and records
// what it reports.
#pragma once

#include <saturn/http/websocket.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws_test {

namespace ws = saturn::http::websocket;

/// `s`'s characters as bytes.
inline std::span<const std::byte> as_span(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

/// Raw bytes as a string (frames are built as std::string for easy concatenation).
using bytes = std::string;

/// A client frame: first byte `b0` (FIN, RSV, opcode) as given, payload masked with `key`
/// unless `masked` is false, the minimal length form unless `len_form` forces 126 or 127.
inline bytes client_frame(std::uint8_t b0, std::string_view payload, bool masked = true,
                          std::uint32_t key = 0x37fa213d, int len_form = 0) {
  bytes f;
  f += static_cast<char>(b0);
  const std::uint64_t n = payload.size();
  const std::uint8_t m = masked ? 0x80 : 0x00;
  int form = len_form != 0 ? len_form : n < 126 ? 0 : n <= 0xFFFF ? 126 : 127;
  if (form == 0) {
    f += static_cast<char>(m | n);
  } else if (form == 126) {
    f += static_cast<char>(m | 126);
    f += static_cast<char>(n >> 8);
    f += static_cast<char>(n);
  } else {
    f += static_cast<char>(m | 127);
    for (int i = 7; i >= 0; --i)
      f += static_cast<char>(n >> (8 * i));
  }
  char k[4] = {static_cast<char>(key >> 24), static_cast<char>(key >> 16), static_cast<char>(key >> 8),
               static_cast<char>(key)};
  if (masked)
    f.append(k, 4);
  for (std::size_t i = 0; i < payload.size(); ++i)
    f += masked ? static_cast<char>(payload[i] ^ k[i & 3]) : payload[i];
  return f;
}
inline bytes text(std::string_view p, bool fin = true) { return client_frame((fin ? 0x80 : 0) | 0x1, p); }
inline bytes binary(std::string_view p, bool fin = true) { return client_frame((fin ? 0x80 : 0) | 0x2, p); }
inline bytes cont(std::string_view p, bool fin = true) { return client_frame((fin ? 0x80 : 0) | 0x0, p); }
inline bytes ping(std::string_view p) { return client_frame(0x89, p); }
inline bytes pong(std::string_view p) { return client_frame(0x8A, p); }
inline bytes close_payload(std::uint16_t code, std::string_view reason = {}) {
  bytes p;
  p += static_cast<char>(code >> 8);
  p += static_cast<char>(code & 0xFF);
  p += reason;
  return p;
}
inline bytes close(std::uint16_t code, std::string_view reason = {}) { return client_frame(0x88, close_payload(code, reason)); }

/// Bytes of a deterministic pattern (every byte value occurs).
inline std::string pattern(std::size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 7;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return s;
}

/// What a message_reader reported, payload copied.
struct seen {
  ws::message_reader::event_kind kind;
  ws::opcode op;
  std::string payload;
  std::uint16_t code;
  bool operator==(const seen&) const = default;
};

/// Drains events until need_more or a terminal one (close, error).
inline void drain(ws::message_reader& r, std::vector<seen>& out) {
  for (;;) {
    auto e = r.next();
    if (e.kind == ws::message_reader::event_kind::need_more)
      return;
    out.push_back(seen{e.kind, e.op, std::string(reinterpret_cast<const char*>(e.payload.data()), e.payload.size()), e.code});
    if (e.kind == ws::message_reader::event_kind::close || e.kind == ws::message_reader::event_kind::error)
      return;
  }
}

/// Feeds `in` through prepare()/commit() (in pieces as large as prepare() allows, at most
/// `max_piece`), draining events after each piece; stops at a terminal event.
inline void feed(ws::message_reader& r, std::string_view in, std::vector<seen>& out, std::size_t max_piece = SIZE_MAX) {
  while (!in.empty()) {
    if (!out.empty() && (out.back().kind == ws::message_reader::event_kind::close ||
                         out.back().kind == ws::message_reader::event_kind::error))
      return;
    auto space = r.prepare();
    std::size_t n = std::min<std::size_t>({space.size(), in.size(), max_piece});
    std::memcpy(space.data(), in.data(), n);
    r.commit(n);
    in.remove_prefix(n);
    drain(r, out);
  }
}

/// Every event for `in` fed in one go (then drained once more).
inline std::vector<seen> parse_whole(std::string_view in, ws::session_options o = {}) {
  ws::message_reader r(o);
  std::vector<seen> out;
  feed(r, in, out);
  return out;
}

/// The last event of `in` (the terminal one for a bad sequence).
inline std::optional<seen> last_event(std::string_view in, ws::session_options o = {}) {
  auto v = parse_whole(in, o);
  if (v.empty())
    return std::nullopt;
  return v.back();
}

/// A server frame parsed off the front of `buf` (removed), if whole.
struct server_frame {
  bool fin = false;
  std::uint8_t rsv = 0;
  std::uint8_t op = 0;
  bool masked = false;
  std::string payload;
};
inline std::optional<server_frame> take_server_frame(std::string& buf) {
  if (buf.size() < 2)
    return std::nullopt;
  const auto b0 = static_cast<std::uint8_t>(buf[0]);
  const auto b1 = static_cast<std::uint8_t>(buf[1]);
  std::size_t pos = 2;
  std::uint64_t n = b1 & 0x7F;
  if (n == 126) {
    if (buf.size() < 4)
      return std::nullopt;
    n = (std::uint64_t{static_cast<std::uint8_t>(buf[2])} << 8) | static_cast<std::uint8_t>(buf[3]);
    pos = 4;
  } else if (n == 127) {
    if (buf.size() < 10)
      return std::nullopt;
    n = 0;
    for (int i = 2; i < 10; ++i)
      n = (n << 8) | static_cast<std::uint8_t>(buf[static_cast<std::size_t>(i)]);
    pos = 10;
  }
  const bool masked = (b1 & 0x80) != 0;
  if (masked)
    pos += 4;
  if (buf.size() < pos + n)
    return std::nullopt;
  server_frame f{(b0 & 0x80) != 0, static_cast<std::uint8_t>((b0 >> 4) & 7), static_cast<std::uint8_t>(b0 & 0xF),
                 masked, buf.substr(pos, n)};
  buf.erase(0, pos + n);
  return f;
}

}  // namespace ws_test
