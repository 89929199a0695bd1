// The WebSocket opening handshake: the RFC 6455 accept-key example, and check_upgrade on
// a table of requests parsed by the real request parser.
#include <saturn/http/parser.hpp>
#include <saturn/http/websocket/handshake.hpp>

#include <gtest/gtest.h>

#include <string>

namespace ws = saturn::http::websocket;

TEST(WebsocketHandshake, AcceptKeyOfTheRfcExample) {
  EXPECT_EQ(ws::accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  // A second value, checked with `printf %s <key>258EAFA5-E914-47DA-95CA-C5AB0DC85B11 |
  // openssl sha1 -binary | base64`.
  EXPECT_EQ(ws::accept_key("x3JJHMbDL1EzLkh9GBhXDw=="), "HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
  const std::string r = ws::handshake_response("dGhlIHNhbXBsZSBub25jZQ==");
  EXPECT_EQ(r,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
  EXPECT_NE(ws::version_rejection_response().find("426"), std::string_view::npos);
  EXPECT_NE(ws::version_rejection_response().find("\r\nSec-WebSocket-Version: 13\r\n"), std::string_view::npos);
}

namespace {

struct row {
  std::string head;  // fields after the request line's "GET /ws HTTP/1.1\r\n", or a whole request
  int status;
  const char* what;
};

const std::string k_good_fields =
    "Host: localhost:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";

/// `raw` belongs to the caller: the check's key views into it (a by-value parameter died
/// at the end of the caller's full-expression and left the key dangling: ASan at -O1).
ws::upgrade_check check(std::string& raw) {
  saturn::http::request_parser p;
  raw += "\r\n";
  auto st = p.parse(raw.data(), raw.size());
  EXPECT_EQ(st, saturn::http::parse_status::complete) << raw;
  if (st != saturn::http::parse_status::complete)
    return {-1, "unparsed", {}};
  return ws::check_upgrade(p.get());
}

}  // namespace

TEST(WebsocketHandshake, CheckUpgradeTable) {
  const std::string host = "Host: h\r\n";
  const std::string key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  const std::string ver = "Sec-WebSocket-Version: 13\r\n";
  const std::string up = "Upgrade: websocket\r\n";
  const std::string conn = "Connection: Upgrade\r\n";
  const row rows[] = {
      {"GET /ws HTTP/1.1\r\n" + k_good_fields, 0, "the arena's request"},
      {"GET /ws HTTP/1.1\r\n" + host + "upgrade: WebSocket\r\nconnection: keep-alive, UPGRADE\r\n" + key + ver, 0,
       "case-insensitive tokens in a list"},
      {"GET /ws HTTP/1.1\r\n" + host + "Upgrade: h2c, websocket\r\nConnection: keep-alive\r\nConnection: upgrade\r\n" +
           key + ver,
       0, "token in a list and a repeated Connection field"},
      {"GET /ws HTTP/1.1\r\n" + host + up + "Connection:Upgrade \r\n" + key + ver, 0, "no OWS before, OWS after"},
      {"POST /ws HTTP/1.1\r\n" + host + up + conn + key + ver + "Content-Length: 0\r\n", 400, "POST"},
      {"GET /ws HTTP/1.0\r\n" + host + up + conn + key + ver, 400, "HTTP/1.0"},
      {"GET /ws HTTP/1.1\r\n" + host + conn + key + ver, 400, "no Upgrade"},
      {"GET /ws HTTP/1.1\r\n" + host + "Upgrade: websockets\r\n" + conn + key + ver, 400, "Upgrade token differs"},
      {"GET /ws HTTP/1.1\r\n" + host + up + key + ver, 400, "no Connection"},
      {"GET /ws HTTP/1.1\r\n" + host + up + "Connection: keep-alive\r\n" + key + ver, 400, "Connection without upgrade"},
      {"GET /ws HTTP/1.1\r\n" + host + up + "Connection: upgrades\r\n" + key + ver, 400, "Connection token differs"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + key, 426, "no version"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + key + "Sec-WebSocket-Version: 8\r\n", 426, "version 8"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + key + "Sec-WebSocket-Version: 13, 8\r\n", 426, "a version list"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver, 400, "no key"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ\r\n", 400,
       "key without padding"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=\r\n", 400,
       "key of 23 characters"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25j*Q==\r\n", 400,
       "key with a non-base64 character"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==dGhl\r\n", 400,
       "key of 20 bytes"},
      {"GET /ws HTTP/1.1\r\n" + host + up + conn + ver + "Sec-WebSocket-Key: c2hvcnQ=\r\n", 400, "key of 5 bytes"},
  };
  for (const row& r : rows) {
    std::string raw = r.head;
    const ws::upgrade_check c = check(raw);
    EXPECT_EQ(c.status, r.status) << r.what;
    EXPECT_EQ(static_cast<bool>(c), r.status == 0) << r.what;
    if (r.status == 0)
      EXPECT_EQ(c.key, "dGhlIHNhbXBsZSBub25jZQ==") << r.what;
    else
      EXPECT_FALSE(c.reason.empty()) << r.what;
  }
}
