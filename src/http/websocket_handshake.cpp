// The server side of the WebSocket opening handshake (RFC 6455 §4.2.1, §4.2.2).
#include <saturn/http/websocket/handshake.hpp>

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <stdexcept>

namespace saturn::http::websocket {

namespace {

constexpr char k_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) noexcept {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/// base64 of 16 bytes is 22 characters and "==".
bool is_base64_of_16_bytes(std::string_view key) noexcept {
  if (key.size() != 24 || key[22] != '=' || key[23] != '=')
    return false;
  for (std::size_t i = 0; i < 22; ++i)
    if (b64_value(key[i]) < 0)
      return false;
  return true;
}

std::string base64(const unsigned char* p, std::size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += k_b64[(v >> 6) & 63];
    out += k_b64[v & 63];
  }
  if (n - i == 1) {
    const std::uint32_t v = std::uint32_t{p[i]} << 16;
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += "==";
  } else if (n - i == 2) {
    const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8);
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += k_b64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// Whether any field named `name` lists `token` in its comma-separated value.
bool lists_token(const request& req, std::string_view name, std::string_view token) noexcept {
  for (const header_field& f : req.headers()) {
    if (!iequals(f.name, name))
      continue;
    std::string_view v = f.value;
    for (;;) {
      const std::size_t comma = v.find(',');
      if (iequals(trim(v.substr(0, comma)), token))
        return true;
      if (comma == std::string_view::npos)
        break;
      v.remove_prefix(comma + 1);
    }
  }
  return false;
}

upgrade_check refuse(int status, std::string_view reason) noexcept { return {status, reason, {}}; }

}  // namespace

upgrade_check check_upgrade(const request& req) noexcept {
  if (req.method != "GET")
    return refuse(400, "websocket upgrade: method is not GET");
  if (req.version_minor < 1)
    return refuse(400, "websocket upgrade: needs HTTP/1.1");
  if (!lists_token(req, "Upgrade", "websocket"))
    return refuse(400, "websocket upgrade: no \"Upgrade: websocket\" field");
  if (!lists_token(req, "Connection", "upgrade"))
    return refuse(400, "websocket upgrade: the Connection field does not list \"upgrade\"");
  if (trim(req.header("Sec-WebSocket-Version")) != "13")
    return refuse(426, "websocket upgrade: Sec-WebSocket-Version is not 13");
  const std::string_view key = trim(req.header("Sec-WebSocket-Key"));
  if (!is_base64_of_16_bytes(key))
    return refuse(400, "websocket upgrade: Sec-WebSocket-Key is not the base64 of 16 bytes");
  return {0, {}, key};
}

std::string accept_key(std::string_view key) {
  std::string in;
  in.reserve(key.size() + handshake_guid.size());
  in.append(key).append(handshake_guid);
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(in.data(), in.size(), md.data(), &len, EVP_sha1(), nullptr) != 1 || len != 20)
    throw std::runtime_error("websocket accept_key: SHA-1 is not available from libcrypto");
  return base64(md.data(), len);
}

std::string handshake_response(std::string_view key) {
  std::string out =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ";
  out += accept_key(key);
  out += "\r\n\r\n";
  return out;
}

std::string_view version_rejection_response() noexcept {
  return "HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n";
}

}  // namespace saturn::http::websocket
