// The WebSocket frame codec, the UTF-8 validator and message_reader: header parsing,
// unmasking against a bytewise oracle, every split point of multi-frame sequences against
// the same bytes parsed whole, each protocol error with its close code, and the buffer
// growing for a large message and shrinking back.
#include "websocket_test_support.hpp"

#include <gtest/gtest.h>

using namespace ws_test;
using ek = ws::message_reader::event_kind;

namespace {

seen msg(ws::opcode op, std::string p) { return seen{ek::message, op, std::move(p), 0}; }
seen ping_ev(std::string p) { return seen{ek::ping, ws::opcode::ping, std::move(p), 0}; }
seen pong_ev(std::string p) { return seen{ek::pong, ws::opcode::pong, std::move(p), 0}; }
seen close_ev(std::uint16_t code, std::string reason) { return seen{ek::close, ws::opcode::close, std::move(reason), code}; }

using ws_test::as_span;

}  // namespace

TEST(WebsocketFrame, HeaderFormsAndSizes) {
  std::byte out[ws::max_server_header_size];
  struct row {
    std::uint64_t len;
    std::size_t size;
  } rows[] = {{0, 2}, {125, 2}, {126, 4}, {65535, 4}, {65536, 10}, {std::uint64_t{1} << 40, 10}};
  for (auto r : rows) {
    EXPECT_EQ(ws::server_header_size(r.len), r.size) << r.len;
    ASSERT_EQ(ws::write_frame_header(out, ws::opcode::binary, r.len), r.size);
    EXPECT_EQ(std::to_integer<int>(out[0]), 0x82);
    // A server frame is never masked; the length reads back.
    std::string s(reinterpret_cast<const char*>(out), r.size);
    s.append(r.len < 1000 ? r.len : 0, 'x');
    if (r.len < 1000) {
      auto f = take_server_frame(s);
      ASSERT_TRUE(f);
      EXPECT_FALSE(f->masked);
      EXPECT_EQ(f->payload.size(), r.len);
    }
  }
  EXPECT_EQ(ws::write_frame_header(out, ws::opcode::text, 3, false), 2u);
  EXPECT_EQ(std::to_integer<int>(out[0]), 0x01);
}

TEST(WebsocketFrame, ParsesEveryLengthFormAndMask) {
  for (std::size_t n : {0u, 5u, 125u, 126u, 300u, 65535u, 65536u, 70000u}) {
    bytes f = binary(pattern(n));
    auto hp = ws::parse_frame_header(as_span(f));
    ASSERT_EQ(hp.state, ws::header_parse::status::ok) << n;
    EXPECT_EQ(hp.header.length, n);
    EXPECT_EQ(hp.header.size, 2 + (n < 126 ? 0 : n <= 0xFFFF ? 2 : 8) + 4);
    EXPECT_TRUE(hp.header.fin);
    EXPECT_TRUE(hp.header.masked);
    EXPECT_EQ(hp.header.op, ws::opcode::binary);
    // Any prefix shorter than the header is incomplete, never an error.
    for (std::size_t k = 0; k < hp.header.size; ++k)
      EXPECT_EQ(ws::parse_frame_header(as_span(f).first(k)).state, ws::header_parse::status::incomplete) << n << " " << k;
  }
  // A non-minimal length form is accepted (RFC 6455 asks senders, not receivers).
  bytes f = client_frame(0x82, "abc", true, 1, 127);
  auto hp = ws::parse_frame_header(as_span(f));
  ASSERT_EQ(hp.state, ws::header_parse::status::ok);
  EXPECT_EQ(hp.header.length, 3u);
}

TEST(WebsocketFrame, HeaderErrorsShowAsSoonAsTheirBytesArrive) {
  struct row {
    bytes prefix;
    const char* what;
  } rows[] = {
      {"\xC1", "rsv1"}, {"\xA1", "rsv2"}, {"\x91", "rsv3"}, {"\x83", "opcode 3"}, {"\x87", "opcode 7"},
      {"\x8B", "opcode 11"}, {"\x8F", "opcode 15"}, {"\x09", "fragmented ping"}, {"\x08", "fragmented close"},
      {bytes("\x81\x05", 2), "unmasked"}, {bytes("\x89\xFE", 2), "ping of 126+"}, {bytes("\x88\xFF", 2), "close of 127 form"},
      {bytes("\x82\xFF\x80", 3), "64-bit length MSB"},
  };
  for (auto& r : rows) {
    auto hp = ws::parse_frame_header(as_span(r.prefix));
    EXPECT_EQ(hp.state, ws::header_parse::status::error) << r.what;
    EXPECT_EQ(hp.close_code, ws::close_code::protocol_error) << r.what;
    EXPECT_NE(std::string_view(hp.reason), "") << r.what;
  }
}

TEST(WebsocketFrame, UnmaskMatchesBytewiseXorForEveryLengthPhaseAndAlignment) {
  const std::array<std::byte, 4> key{std::byte{0x12}, std::byte{0x34}, std::byte{0xAB}, std::byte{0xCD}};
  const std::string src = pattern(200, 9);
  for (std::size_t align = 0; align < 8; ++align)
    for (std::size_t phase = 0; phase < 4; ++phase)
      for (std::size_t n = 0; n <= 80; ++n) {
        std::vector<std::byte> buf(n + align + 1);  // never empty: memcpy to a null data() is UB
        std::memcpy(buf.data() + align, src.data(), n);
        ws::unmask(buf.data() + align, n, key, phase);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(buf[align + i], static_cast<std::byte>(src[i]) ^ key[(phase + i) & 3]) << n << " " << phase;
      }
  // Unmasking in pieces with the phase carried equals unmasking whole.
  std::vector<std::byte> a(150), b(150);
  std::memcpy(a.data(), src.data(), 150);
  std::memcpy(b.data(), src.data(), 150);
  ws::unmask(a.data(), 150, key);
  ws::unmask(b.data(), 37, key, 0);
  ws::unmask(b.data() + 37, 113, key, 37);
  EXPECT_EQ(a, b);
}

TEST(WebsocketUtf8, Table) {
  struct row {
    bytes s;
    bool valid;
  } rows[] = {
      {"", true}, {"hello", true}, {"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5", true},  // κόσμε
      {"\xc2\x80", true}, {"\xdf\xbf", true}, {"\xe0\xa0\x80", true}, {"\xed\x9f\xbf", true},  // U+D7FF
      {"\xee\x80\x80", true}, {"\xef\xbf\xbd", true}, {"\xf0\x90\x80\x80", true},
      {"\xf4\x8f\xbf\xbf", true},  // U+10FFFF
      {bytes(1, '\0'), true},
      {"\xc0\xaf", false}, {"\xc1\xbf", false}, {"\xe0\x80\xaf", false}, {"\xe0\x9f\xbf", false},  // overlongs
      {"\xf0\x80\x80\xaf", false}, {"\xf0\x8f\xbf\xbf", false},
      {"\xed\xa0\x80", false}, {"\xed\xbf\xbf", false}, {"\xed\xaf\xbf\xed\xb0\x80", false},  // surrogates
      {"\xf4\x90\x80\x80", false}, {"\xf5\x80\x80\x80", false}, {"\xf8\x88\x80\x80\x80", false},  // > U+10FFFF
      {"\xfe", false}, {"\xff", false}, {"\x80", false}, {"\xbf", false},                       // stray bytes
      {"\xc2", false}, {"\xe2\x82", false}, {"\xf0\x9f\x98", false},                           // truncated at the end
      {"a\xc2" "a", false}, {"\xe2\x28\xa1", false}, {"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80" "edited", false},
      {"0123456789abcdef0123456789abcdef\xc0\xaf", false},  // after the eight-byte ASCII path
      {"0123456789abcdef0123456789abcde\xe2\x82\xac", true},
  };
  for (auto& r : rows) {
    EXPECT_EQ(ws::valid_utf8(r.s), r.valid) << testing::PrintToString(r.s);
    // Split at every point, the validator says the same; an open code point at the split
    // is not an error yet.
    for (std::size_t k = 0; k <= r.s.size(); ++k) {
      ws::utf8_validator v;
      v.feed(as_span(r.s).first(k));
      v.feed(as_span(r.s).subspan(k));
      EXPECT_EQ(v.complete(), r.valid) << testing::PrintToString(r.s) << " split at " << k;
    }
  }
  ws::utf8_validator v;
  EXPECT_TRUE(v.feed(as_span("\xf0\x9f")));
  EXPECT_FALSE(v.complete());
  EXPECT_FALSE(v.failed());
  EXPECT_TRUE(v.feed(as_span("\x98\x80")));
  EXPECT_TRUE(v.complete());
}

// ---- message_reader

namespace {

// Text, 256-byte binary (16-bit length), a fragmented text message whose fragments split a
// code point with a ping between them, a pong, an empty binary, a close.
bytes small_sequence() {
  return text("hello") + binary(pattern(256)) + text("\xce\xba\xe1", false) + ping("are you there") +
         cont("\xbd\xb9\xcf", false) + cont("\x83 done") + pong("p") + binary("") + ws_test::close(1000, "bye");
}
std::vector<seen> small_expected() {
  return {msg(ws::opcode::text, "hello"), msg(ws::opcode::binary, pattern(256)), ping_ev("are you there"),
          msg(ws::opcode::text, "\xce\xba\xe1\xbd\xb9\xcf\x83 done"), pong_ev("p"), msg(ws::opcode::binary, ""),
          close_ev(1000, "bye")};
}

}  // namespace

TEST(WebsocketReader, WholeSequence) {
  EXPECT_EQ(parse_whole(small_sequence()), small_expected());
}

TEST(WebsocketReader, EverySplitPointGivesTheSameEvents) {
  const bytes in = small_sequence();
  const auto whole = parse_whole(in);
  ASSERT_EQ(whole, small_expected());
  for (std::size_t k = 0; k <= in.size(); ++k) {
    ws::message_reader r;
    std::vector<seen> out;
    feed(r, std::string_view(in).substr(0, k), out);
    feed(r, std::string_view(in).substr(k), out);
    ASSERT_EQ(out, whole) << "split at " << k;
  }
  ws::message_reader r;
  std::vector<seen> out;
  feed(r, in, out, 1);
  EXPECT_EQ(out, whole) << "one byte at a time";
}

TEST(WebsocketReader, LargeMessagesSplitAnywhere) {
  // 70,000 bytes need the 64-bit length; a fragmented 100,000-byte message after it.
  const std::string big = pattern(70000, 3), frag = pattern(100000, 4);
  const bytes in = binary(big) + text("x") + binary(frag.substr(0, 40000), false) + ping("") +
                   cont(frag.substr(40000, 60000)) + text("tail");
  const std::vector<seen> expected{msg(ws::opcode::binary, big), msg(ws::opcode::text, "x"), ping_ev(""),
                                   msg(ws::opcode::binary, frag), msg(ws::opcode::text, "tail")};
  ASSERT_EQ(parse_whole(in), expected);
  std::vector<std::size_t> splits;
  for (std::size_t k = 0; k < 64; ++k) {
    splits.push_back(k);
    splits.push_back(in.size() - k);
    splits.push_back(70014 - 32 + k);  // around the end of the first frame
  }
  for (std::size_t k = 0; k < in.size(); k += 997)
    splits.push_back(k);
  for (std::size_t k : splits) {
    ws::message_reader r;
    std::vector<seen> out;
    feed(r, std::string_view(in).substr(0, k), out);
    feed(r, std::string_view(in).substr(k), out);
    ASSERT_EQ(out, expected) << "split at " << k;
  }
  ws::message_reader r;
  std::vector<seen> out;
  feed(r, in, out, 1500);  // MTU-sized reads
  EXPECT_EQ(out, expected);
}

TEST(WebsocketReader, BufferStartsSmallGrowsForALargeMessageAndShrinksBack) {
  ws::message_reader r;
  EXPECT_EQ(r.buffer_capacity(), 0u) << "nothing allocated before the first read";
  std::vector<seen> out;
  feed(r, text("hi"), out);
  EXPECT_EQ(r.buffer_capacity(), 512u);
  const bytes big = binary(pattern(70000));
  std::string_view in = big;
  ws::message_reader::event e;
  for (;;) {  // read until the message is there, and look at the buffer while it is held
    e = r.next();
    if (e.kind != ek::need_more || in.empty())
      break;
    auto space = r.prepare();
    const std::size_t n = std::min(space.size(), in.size());
    std::memcpy(space.data(), in.data(), n);
    r.commit(n);
    in.remove_prefix(n);
  }
  ASSERT_EQ(e.kind, ek::message);
  EXPECT_EQ(e.payload.size(), 70000u);
  EXPECT_GE(r.buffer_capacity(), 70000u);
  EXPECT_LE(r.buffer_capacity(), 70000u + 64) << "grown to the frame's size, not doubled past it";
  EXPECT_EQ(r.next().kind, ek::need_more);
  EXPECT_EQ(r.buffer_capacity(), 0u) << "released once consumed";
  feed(r, text("small again"), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], msg(ws::opcode::text, "small again"));
  EXPECT_EQ(r.buffer_capacity(), 512u);
}

TEST(WebsocketReader, ProtocolErrorsCloseWithTheirCodes) {
  ws::session_options small;
  small.max_message = 1000;
  struct row {
    bytes in;
    std::uint16_t code;
    const char* what;
    ws::session_options o = {};
  } rows[] = {
      {client_frame(0x81, "hello", false), 1002, "unmasked text"},
      {client_frame(0x89, "", false), 1002, "unmasked ping"},
      {client_frame(0xC1, "x"), 1002, "rsv1 without extension"},
      {client_frame(0xA2, "x"), 1002, "rsv2"},
      {client_frame(0x83, "x"), 1002, "reserved data opcode"},
      {client_frame(0x8C, "x"), 1002, "reserved control opcode"},
      {client_frame(0x89, std::string(126, 'p')), 1002, "ping over 125 bytes"},
      {client_frame(0x09, "x"), 1002, "fragmented ping"},
      {bytes("\x82\xFF\x80\0\0\0\0\0\0\0", 10), 1002, "64-bit length MSB set"},
      {cont("orphan"), 1002, "continuation without a message"},
      {text("a", false) + text("b"), 1002, "text inside a fragmented message"},
      {binary("a", false) + binary("b"), 1002, "binary inside a fragmented message"},
      {binary(std::string(1001, 'x')), 1009, "message over max", small},
      {binary(std::string(600, 'x'), false) + cont(std::string(401, 'x')), 1009, "fragments over max", small},
      {text("\xc0\xaf"), 1007, "overlong"},
      {text("\xed\xa0\x80"), 1007, "surrogate"},
      {text("\xf4\x90\x80\x80"), 1007, "over U+10FFFF"},
      {text("ok\xe2\x82"), 1007, "truncated at message end"},
      {text("\xce", false) + cont("\xba\xed", false) + cont("\xa0\x80"), 1007, "surrogate split over fragments"},
      {text("\xe2\x82", false) + cont("x"), 1007, "code point cut by the next fragment"},
      {client_frame(0x88, "\x03"), 1002, "close with 1-byte payload"},
      {ws_test::close(1000, "\xff"), 1007, "close reason not UTF-8"},
  };
  for (auto& r : rows) {
    auto e = last_event(r.in, r.o);
    ASSERT_TRUE(e) << r.what;
    EXPECT_EQ(e->kind, ek::error) << r.what;
    EXPECT_EQ(e->code, r.code) << r.what;
  }
  // An oversized message is refused from its header alone (before its payload arrives).
  auto early = last_event(binary(std::string(5000, 'x')).substr(0, 8), small);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->code, 1009);
  // Messages of exactly max_message bytes are fine.
  auto at = last_event(binary(std::string(600, 'x'), false) + cont(std::string(400, 'x')), small);
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, msg(ws::opcode::binary, std::string(1000, 'x')));
}

TEST(WebsocketReader, CloseCodes) {
  for (std::uint16_t c : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999}) {
    EXPECT_TRUE(ws::valid_close_code(c)) << c;
    auto e = last_event(ws_test::close(c, "r"));
    ASSERT_TRUE(e);
    EXPECT_EQ(*e, close_ev(c, "r")) << c;
  }
  for (std::uint16_t c : {0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}) {
    EXPECT_FALSE(ws::valid_close_code(c)) << c;
    auto e = last_event(ws_test::close(c));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind, ek::error) << c;
    EXPECT_EQ(e->code, 1002) << c;
  }
  auto empty = last_event(client_frame(0x88, ""));
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, close_ev(1005, "")) << "no code reports 1005";
}

TEST(WebsocketReader, AfterACloseOrAnErrorTheSameEventRepeats) {
  ws::message_reader r;
  std::vector<seen> out;
  feed(r, ws_test::close(1001) + text("ignored"), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(r.next().kind, ek::close);
  EXPECT_EQ(r.next().code, 1001);
}

TEST(WebsocketReader, Utf8CheckCanBeTurnedOff) {
  ws::session_options o;
  o.validate_utf8 = false;
  auto e = last_event(text("\xff\xfe"), o);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, msg(ws::opcode::text, "\xff\xfe"));
}

TEST(WebsocketReader, ReplyFramesAreBuiltInPlaceBeforeThePayload) {
  ws::message_reader r;
  std::vector<seen> out;
  const bytes in = text("hello") + binary(pattern(300), false) + ping("pp") + cont("end");
  auto space = r.prepare();
  ASSERT_GE(space.size(), in.size());
  std::memcpy(space.data(), in.data(), in.size());
  r.commit(in.size());
  for (int i = 0; i < 3; ++i) {
    auto e = r.next();
    ASSERT_NE(e.kind, ek::need_more);
    const std::size_t hs = ws::server_header_size(e.payload.size());
    auto f = r.frame_before(e.payload, hs);
    ASSERT_EQ(f.size(), hs + e.payload.size()) << i;
    EXPECT_EQ(f.data() + hs, e.payload.data());
    const std::string copy(reinterpret_cast<const char*>(e.payload.data()), e.payload.size());
    ws::write_frame_header(f.data(), e.kind == ek::ping ? ws::opcode::pong : e.op, e.payload.size());
    std::string wire(reinterpret_cast<const char*>(f.data()), f.size());
    auto sf = take_server_frame(wire);
    ASSERT_TRUE(sf);
    EXPECT_EQ(sf->payload, copy) << "the header did not overwrite the payload";
    EXPECT_TRUE(wire.empty());
    if (i == 1) {  // the ping inside the fragmented message: its pong header must not reach the message
      EXPECT_TRUE(r.frame_before(e.payload, 10).empty());
    }
  }
  // A span the reader did not return is refused.
  const std::string other = "elsewhere";
  EXPECT_TRUE(r.frame_before(as_span(other), 2).empty());
}
