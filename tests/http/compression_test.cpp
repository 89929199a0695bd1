// Accept-Encoding negotiation, gzip/brotli round trips against the real libraries and the
// system's gzip and brotli programs, streaming, decoder limits and bad input, the policy
// and the header helpers.
#include <saturn/http/accept_encoding.hpp>
#include <saturn/http/compression.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace http = saturn::http;
using http::compression_errc;
using http::content_coding;

namespace {

constexpr content_coding id = content_coding::identity;
constexpr content_coding gz = content_coding::gzip;
constexpr content_coding br = content_coding::br;

// ---- negotiation

struct negotiation_case {
  const char* field;
  content_coding expected;
  bool acceptable;
};

TEST(AcceptEncoding, Table) {
  const negotiation_case cases[] = {
      {"br;q=1, gzip;q=0.8", br, true},  // HttpArena's static profile
      {"gzip;q=0.8, br;q=1", br, true},
      {"gzip", gz, true},
      {"br", br, true},
      {"gzip, br", br, true},            // equal weights: the server prefers br
      {"br, gzip", br, true},
      {"gzip, deflate, br, zstd", br, true},
      {"gzip, deflate", gz, true},
      {"deflate", id, true},
      {"zstd;q=1, deflate", id, true},
      {"gzip;q=1, br;q=0.5", gz, true},
      {"br;q=0.999, gzip", gz, true},
      {"br;q=0.001", br, true},          // listed q > 0 beats the implicit identity
      {"*", br, true},
      {"*;q=0.5", br, true},
      {"*, br;q=0", gz, true},
      {"*, br;q=0, gzip;q=0", id, true},
      {"*;q=0", id, false},              // identity excluded and nothing else acceptable
      {"*;q=0, identity", id, true},
      {"*;q=0, gzip", gz, true},
      {"identity;q=0", id, false},
      {"identity;q=0, gzip", gz, true},
      {"identity;q=0, gzip;q=0", id, false},
      {"identity", id, true},
      {"identity, gzip", gz, true},      // equal weights: compressed first
      {"identity;q=1, gzip;q=0.5", id, true},
      {"gzip;q=0", id, true},
      {"br;q=0, gzip;q=0", id, true},
      {"", id, true},
      {" ", id, true},
      {",", id, true},
      {", , gzip ,", gz, true},
      {"GZIP", gz, true},
      {"Br", br, true},
      {"gZiP;Q=0.5", gz, true},
      {"x-gzip", gz, true},
      {"X-GZIP;q=0.3, identity;q=0.2", gz, true},
      {"gzip ; q=0.5 , br ; q=0.4", gz, true},
      {"\tgzip\t;\tq=1\t", gz, true},
      {"br;q=2, gzip;q=0.1", gz, true},   // q=2 is not a qvalue: br's element ignored
      {"br;q=abc, gzip;q=0.1", gz, true},
      {"br;q=1.5", id, true},
      {"br;q=1.0001", id, true},
      {"br;q=0.1234", id, true},
      {"br;q=-1", id, true},
      {"br;q=", id, true},
      {"br;q", id, true},
      {"br;level=5", id, true},            // a parameter other than q: element ignored
      {"br;q=1;x=y", id, true},
      {"br;q=1.000, gzip;q=1", br, true},
      {"br;q=0.000", id, true},
      {"br;q=0.", id, true},               // "0." is a qvalue (0) per the grammar
      {"gzip;q=0.", id, true},
      {"gzip;q=1.", gz, true},
      {"gzip/x", id, true},                // not a token: ignored
      {"gzip br", id, true},
      {"identity;q=abc", id, true},        // a bad q cannot exclude identity either
      {"*;q=abc", id, true},
      {"gzip;q=0, gzip;q=1", id, true},    // first valid element of a coding counts
      {"gzip;q=bad, gzip;q=1", gz, true},  // the bad one was ignored, so the second is first
      {"x-gzip;q=0, gzip", id, true},      // the alias is the same coding
      {";q=1", id, true},
      {"br;q=0.5, *;q=0.9", gz, true},     // '*' is not br: gzip and identity get 0.9
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string("Accept-Encoding: ") + c.field);
    auto got = http::negotiate_encoding(c.field);
    EXPECT_EQ(got.acceptable, c.acceptable);
    EXPECT_EQ(http::coding_name(got.coding), http::coding_name(c.expected));
  }
}

TEST(AcceptEncoding, StarGivesItsWeightToUnlistedCodings) {
  // br listed at 0.5, '*' gives gzip 0.9 which beats it.
  EXPECT_EQ(http::negotiate_encoding("br;q=0.5, *;q=0.9").coding, gz);
  EXPECT_EQ(http::negotiate_encoding("br;q=0.5, *;q=0.9", {.br = true, .gzip = false}).coding, id);
}

TEST(AcceptEncoding, OfferLimitsTheChoice) {
  EXPECT_EQ(http::negotiate_encoding("br, gzip", {.br = false, .gzip = true}).coding, gz);
  EXPECT_EQ(http::negotiate_encoding("br", {.br = false, .gzip = true}).coding, id);
  EXPECT_EQ(http::negotiate_encoding("*", {.br = false, .gzip = false}).coding, id);
  auto none = http::negotiate_encoding("br, identity;q=0", {.br = false, .gzip = true});
  EXPECT_FALSE(none.acceptable);
  EXPECT_EQ(none.coding, id);
}

TEST(AcceptEncoding, SeveralFieldsAreOneList) {
  std::vector<http::header_field> h = {
      {"Host", "x"},
      {"accept-encoding", "gzip;q=0.5"},
      {"Accept", "br"},  // not an Accept-Encoding field
      {"ACCEPT-ENCODING", "br;q=0.7"},
  };
  EXPECT_EQ(http::negotiate_encoding(h).coding, br);
  h[3].value = "identity;q=0";
  EXPECT_EQ(http::negotiate_encoding(h).coding, gz);
  h[1].value = "gzip;q=0";
  auto none = http::negotiate_encoding(h);
  EXPECT_FALSE(none.acceptable);
  std::vector<http::header_field> empty = {{"Host", "x"}};
  EXPECT_EQ(http::negotiate_encoding(empty).coding, id);
  EXPECT_TRUE(http::negotiate_encoding(empty).acceptable);
}

TEST(ContentCoding, Names) {
  EXPECT_EQ(http::coding_name(gz), "gzip");
  EXPECT_EQ(http::coding_name(br), "br");
  EXPECT_EQ(http::coding_name(id), "identity");
  EXPECT_EQ(http::parse_coding("X-Gzip"), gz);
  EXPECT_EQ(http::parse_coding("BR"), br);
  EXPECT_EQ(http::parse_coding("Identity"), id);
  EXPECT_FALSE(http::parse_coding("deflate").has_value());
  EXPECT_FALSE(http::parse_coding("").has_value());
}

// ---- inputs

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s)
    c = static_cast<char>(rng() & 0xff);
  return s;
}

std::string text_bytes(std::size_t n, unsigned seed) {
  static const char* const words[] = {"saturn", "ring", "worker", "{\"id\":", "\"name\":", "true", "false",
                                      "null", ",", "\n", "<div>", "</div>", "the", "quick", "brown", "fox"};
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n) {
    s += words[rng() % std::size(words)];
    s += ' ';
  }
  s.resize(n);
  return s;
}

const std::size_t sizes[] = {0, 1, 100, 64 * 1024, 1024 * 1024};

// ---- round trips

std::string coding_param_name(const ::testing::TestParamInfo<content_coding>& p) {
  return std::string(http::coding_name(p.param));
}

class RoundTrip : public ::testing::TestWithParam<content_coding> {};

TEST_P(RoundTrip, OneShotRandomAndText) {
  content_coding c = GetParam();
  for (std::size_t n : sizes) {
    for (bool text : {false, true}) {
      SCOPED_TRACE("size " + std::to_string(n) + (text ? " text" : " random"));
      std::string in = text ? text_bytes(n, 7) : random_bytes(n, 11);
      auto packed = http::compress(c, in);
      ASSERT_TRUE(packed) << packed.err().message();
      if (text && n >= 64 * 1024 && c != id) {
        EXPECT_LT(packed->size(), in.size() / 2);  // it does compress
      }
      auto unpacked = http::decompress(c, *packed);
      ASSERT_TRUE(unpacked) << unpacked.err().message();
      EXPECT_TRUE(*unpacked == in);
    }
  }
}

TEST_P(RoundTrip, EveryLevel) {
  content_coding c = GetParam();
  std::string in = text_bytes(20000, 3);
  int top = c == br ? 11 : 9;
  for (int level = 0; level <= top; ++level) {
    http::compression_options o;
    o.gzip_level = level;
    o.brotli_quality = level;
    auto packed = http::compress(c, in, o);
    ASSERT_TRUE(packed) << "level " << level << ": " << packed.err().message();
    auto unpacked = http::decompress(c, *packed);
    ASSERT_TRUE(unpacked) << "level " << level << ": " << unpacked.err().message();
    EXPECT_TRUE(*unpacked == in) << "level " << level;
  }
}

TEST_P(RoundTrip, StreamingDecodesToTheConcatenatedInput) {
  content_coding c = GetParam();
  for (bool text : {false, true}) {
    std::string whole = text ? text_bytes(1 << 20, 5) : random_bytes(1 << 20, 9);
    auto enc = http::stream_encoder::make(c);
    ASSERT_TRUE(enc) << enc.err().message();
    std::string packed;
    std::mt19937 rng(1);
    std::size_t pos = 0;
    while (pos < whole.size()) {
      std::size_t n = std::min<std::size_t>(whole.size() - pos, 1 + rng() % 9000);
      std::size_t before = packed.size();
      auto w = enc->write(std::string_view(whole).substr(pos, n), packed);
      ASSERT_TRUE(w) << w.err().message();
      // Bounded: one write emits at most its input plus what the coder held back (zlib: its
      // pending buffer; brotli: up to twice its window of input, a metablock).
      std::size_t held = c == br ? std::size_t{2} << http::compression_options{}.brotli_window_bits : 64 * 1024;
      EXPECT_LE(packed.size() - before, n + held + 4096);
      pos += n;
    }
    ASSERT_TRUE(enc->finish(packed));
    EXPECT_EQ(enc->finish(packed).code(), compression_errc::finished);
    EXPECT_EQ(enc->write("x", packed).code(), compression_errc::finished);

    // Decode in pieces of odd sizes too.
    auto dec = http::stream_decoder::make(c);
    ASSERT_TRUE(dec);
    std::string out;
    for (std::size_t p = 0; p < packed.size(); p += 777) {
      auto w = dec->write(std::string_view(packed).substr(p, 777), out);
      ASSERT_TRUE(w) << w.err().message();
    }
    EXPECT_TRUE(dec->done());
    EXPECT_EQ(dec->total_out(), whole.size());
    ASSERT_TRUE(dec->finish());
    EXPECT_TRUE(out == whole);
  }
}

TEST_P(RoundTrip, FlushMakesEverythingWrittenDecodable) {
  content_coding c = GetParam();
  auto enc = http::stream_encoder::make(c);
  ASSERT_TRUE(enc);
  auto dec = http::stream_decoder::make(c);
  ASSERT_TRUE(dec);
  std::string expected, decoded;
  for (int i = 0; i < 20; ++i) {
    std::string event = "data: event " + std::to_string(i) + "\n\n";
    expected += event;
    std::string packed;
    ASSERT_TRUE(enc->write(event, packed));
    ASSERT_TRUE(enc->flush(packed));
    ASSERT_TRUE(dec->write(packed, decoded));
    EXPECT_EQ(decoded, expected) << "after event " << i;
  }
  std::string tail;
  ASSERT_TRUE(enc->finish(tail));
  ASSERT_TRUE(dec->write(tail, decoded));
  EXPECT_TRUE(dec->done());
  EXPECT_EQ(decoded, expected);
}

TEST_P(RoundTrip, EmptyStream) {
  content_coding c = GetParam();
  auto enc = http::stream_encoder::make(c);
  ASSERT_TRUE(enc);
  std::string packed;
  ASSERT_TRUE(enc->finish(packed));
  if (c != id) {
    EXPECT_FALSE(packed.empty());
  }
  auto out = http::decompress(c, packed);
  ASSERT_TRUE(out) << out.err().message();
  EXPECT_TRUE(out->empty());
  EXPECT_TRUE(http::decompress(c, "")->empty());  // no body at all: an empty body
}

INSTANTIATE_TEST_SUITE_P(Codings, RoundTrip, ::testing::Values(gz, br, id),
                         coding_param_name);

// ---- limits and bad input

class Decoding : public ::testing::TestWithParam<content_coding> {};

TEST_P(Decoding, LimitStopsABomb) {
  content_coding c = GetParam();
  std::string zeros(10 << 20, '\0');
  auto bomb = http::compress(c, zeros);
  ASSERT_TRUE(bomb);
  EXPECT_LT(bomb->size(), std::size_t{64} << 10);  // 10 MiB of zeros packs very small
  auto out = http::decompress(c, *bomb, 1 << 20);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.code(), compression_errc::output_limit);
  EXPECT_NE(out.err().message().find("size limit"), std::string::npos) << out.err().message();
  // The streaming decoder stops at the limit too, having produced at most limit + 1 bytes.
  auto dec = http::stream_decoder::make(c, 1 << 20);
  ASSERT_TRUE(dec);
  std::string sink;
  auto w = dec->write(*bomb, sink);
  EXPECT_EQ(w.code(), compression_errc::output_limit);
  EXPECT_LE(sink.size(), (std::size_t{1} << 20) + 1);
  EXPECT_EQ(dec->write("x", sink).code(), compression_errc::finished);
  // Exactly at the limit is fine.
  auto exact = http::decompress(c, *bomb, zeros.size());
  ASSERT_TRUE(exact) << exact.err().message();
  EXPECT_EQ(exact->size(), zeros.size());
  EXPECT_EQ(http::decompress(c, *bomb, zeros.size() - 1).code(), compression_errc::output_limit);
}

TEST_P(Decoding, CorruptInputIsAnError) {
  content_coding c = GetParam();
  std::string in = text_bytes(50000, 2);
  auto packed = http::compress(c, in);
  ASSERT_TRUE(packed);
  // Not a stream of the coding at all.
  auto junk = http::decompress(c, "this is not compressed data at all, not even a little");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.code(), compression_errc::corrupt_input);
  EXPECT_NE(junk.err().message().find(c == gz ? "gzip decode" : "br decode"), std::string::npos);
  // Flipped bytes: gzip's CRC-32 catches every one; brotli has no checksum, so a flip may
  // decode to other bytes, but never to the original and never past the end of the buffer.
  for (std::size_t at : {packed->size() / 3, packed->size() / 2, packed->size() - 6}) {
    std::string bad = *packed;
    bad[at] = static_cast<char>(bad[at] ^ 0x55);
    auto out = http::decompress(c, bad);
    if (c == gz) {
      EXPECT_FALSE(out) << "corruption at " << at << " was not detected";
    } else if (out) {
      EXPECT_FALSE(*out == in) << "a corrupted stream decoded to the original at " << at;
    }
  }
  // Random garbage of many sizes: gzip refuses it (no gzip magic); for brotli, where a few
  // short byte strings are valid streams, it must only end, within the limit.
  for (unsigned seed = 0; seed < 50; ++seed) {
    auto out = http::decompress(c, random_bytes(1 + seed * 37, seed), 1 << 20);
    if (c == gz) {
      EXPECT_FALSE(out) << "seed " << seed;
    } else if (out) {
      EXPECT_LE(out->size(), std::size_t{1} << 20);
    }
  }
}

TEST_P(Decoding, TruncatedInputIsAnError) {
  content_coding c = GetParam();
  auto packed = http::compress(c, text_bytes(50000, 4));
  ASSERT_TRUE(packed);
  for (std::size_t keep : {std::size_t{1}, std::size_t{5}, packed->size() / 2, packed->size() - 1}) {
    auto out = http::decompress(c, std::string_view(*packed).substr(0, keep));
    ASSERT_FALSE(out) << "kept " << keep;
    EXPECT_EQ(out.code(), compression_errc::truncated_input) << "kept " << keep << ": " << out.err().message();
  }
}

TEST_P(Decoding, TrailingBytes) {
  content_coding c = GetParam();
  auto packed = http::compress(c, text_bytes(3000, 6));
  ASSERT_TRUE(packed);
  auto out = http::decompress(c, *packed + "garbage after the stream");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.code(), c == br ? compression_errc::trailing_data : compression_errc::corrupt_input);
}

INSTANTIATE_TEST_SUITE_P(Codings, Decoding, ::testing::Values(gz, br),
                         coding_param_name);

TEST(Gzip, SeveralMembersDecodeAsOne) {
  auto a = http::compress(gz, "first member, ");
  auto b = http::compress(gz, "second member");
  ASSERT_TRUE(a && b);
  auto out = http::decompress(gz, *a + *b);
  ASSERT_TRUE(out) << out.err().message();
  EXPECT_EQ(*out, "first member, second member");
}

TEST(Compression, InvalidOptions) {
  http::compression_options o;
  o.gzip_level = 10;
  EXPECT_EQ(http::compress(gz, "x", o).code(), compression_errc::invalid_options);
  EXPECT_EQ(http::stream_encoder::make(gz, o).code(), compression_errc::invalid_options);
  o = {};
  o.brotli_quality = 12;
  EXPECT_EQ(http::compress(br, "x", o).code(), compression_errc::invalid_options);
  o = {};
  o.brotli_window_bits = 9;
  EXPECT_EQ(http::stream_encoder::make(br, o).code(), compression_errc::invalid_options);
  o.brotli_window_bits = 25;
  EXPECT_EQ(http::stream_encoder::make(br, o).code(), compression_errc::invalid_options);
}

TEST(Compression, IdentityDecoderKeepsTheLimit) {
  EXPECT_EQ(http::decompress(id, std::string(11, 'x'), 10).code(), compression_errc::output_limit);
  EXPECT_EQ(*http::decompress(id, std::string(10, 'x'), 10), std::string(10, 'x'));
}

// ---- the system's programs as oracles

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/saturn-compress-XXXXXX";
    const char* p = mkdtemp(tmpl);
    path = p != nullptr ? p : "";
  }
  ~temp_dir() {
    if (!path.empty())
      std::system(("rm -rf '" + path + "'").c_str());
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

void write_file(const std::string& path, std::string_view data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool have_program(const char* name) {
  return std::system(("command -v " + std::string(name) + " >/dev/null 2>&1").c_str()) == 0;
}

/// Runs a shell command; true if it exited 0.
bool run(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

TEST(SystemTools, GzipDecodesOurOutputAndWeDecodeItsOutput) {
  if (!have_program("gzip"))
    GTEST_SKIP() << "gzip is not installed";
  temp_dir dir;
  ASSERT_FALSE(dir.path.empty());
  for (std::size_t n : sizes) {
    std::string in = text_bytes(n, 8) + random_bytes(n / 4, 8);
    auto packed = http::compress(gz, in);
    ASSERT_TRUE(packed);
    write_file(dir.path + "/a.gz", *packed);
    ASSERT_TRUE(run("gzip -dc '" + dir.path + "/a.gz' > '" + dir.path + "/a.out'")) << "size " << n;
    EXPECT_TRUE(read_file(dir.path + "/a.out") == in) << "size " << n;

    write_file(dir.path + "/b", in);
    ASSERT_TRUE(run("gzip -9 -c '" + dir.path + "/b' > '" + dir.path + "/b.gz'"));
    auto theirs = http::decompress(gz, read_file(dir.path + "/b.gz"));
    ASSERT_TRUE(theirs) << theirs.err().message();
    EXPECT_TRUE(*theirs == in) << "size " << n;
  }
}

TEST(SystemTools, BrotliDecodesOurOutputAndWeDecodeItsOutput) {
  if (!have_program("brotli"))
    GTEST_SKIP() << "the brotli program is not installed (Debian package brotli)";
  temp_dir dir;
  ASSERT_FALSE(dir.path.empty());
  for (std::size_t n : sizes) {
    std::string in = text_bytes(n, 9) + random_bytes(n / 4, 9);
    auto packed = http::compress(br, in);
    ASSERT_TRUE(packed);
    write_file(dir.path + "/a.br", *packed);
    ASSERT_TRUE(run("brotli -dc '" + dir.path + "/a.br' > '" + dir.path + "/a.out'")) << "size " << n;
    EXPECT_TRUE(read_file(dir.path + "/a.out") == in) << "size " << n;

    // The streaming encoder's output too.
    auto enc = http::stream_encoder::make(br);
    ASSERT_TRUE(enc);
    std::string streamed;
    for (std::size_t p = 0; p < in.size(); p += 10000)
      ASSERT_TRUE(enc->write(std::string_view(in).substr(p, 10000), streamed));
    ASSERT_TRUE(enc->finish(streamed));
    write_file(dir.path + "/s.br", streamed);
    ASSERT_TRUE(run("brotli -dc '" + dir.path + "/s.br' > '" + dir.path + "/s.out'")) << "size " << n;
    EXPECT_TRUE(read_file(dir.path + "/s.out") == in) << "size " << n;

    write_file(dir.path + "/b", in);
    ASSERT_TRUE(run("brotli -q 9 -c '" + dir.path + "/b' > '" + dir.path + "/b.br'"));
    auto theirs = http::decompress(br, read_file(dir.path + "/b.br"));
    ASSERT_TRUE(theirs) << theirs.err().message();
    EXPECT_TRUE(*theirs == in) << "size " << n;
  }
}

// ---- policy and header helpers

TEST(CompressionPolicy, Types) {
  const char* yes[] = {"text/html",
                       "text/html; charset=utf-8",
                       "TEXT/PLAIN",
                       "text/css",
                       "text/javascript",
                       "text/csv",
                       "application/json",
                       "application/json; charset=utf-8",
                       "Application/JSON",
                       "application/problem+json",
                       "application/ld+json",
                       "application/javascript",
                       "application/xml",
                       "application/atom+xml",
                       "application/wasm",
                       "application/x-ndjson",
                       "image/svg+xml",
                       "image/x-icon",
                       "font/ttf",
                       "font/otf",
                       "application/vnd.ms-fontobject",
                       " text/plain ;charset=x"};
  const char* no[] = {"image/png",
                      "image/jpeg",
                      "image/webp",
                      "image/gif",
                      "image/avif",
                      "video/mp4",
                      "audio/mpeg",
                      "application/zip",
                      "application/gzip",
                      "application/x-gzip",
                      "application/zstd",
                      "application/x-7z-compressed",
                      "font/woff",
                      "font/woff2",
                      "application/pdf",
                      "application/octet-stream",
                      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                      "",
                      "text",
                      "text/",
                      "/json",
                      "garbage"};
  for (const char* t : yes)
    EXPECT_TRUE(http::compressible_type(t)) << t;
  for (const char* t : no)
    EXPECT_FALSE(http::compressible_type(t)) << t;
}

TEST(CompressionPolicy, Size) {
  http::compression_options o;
  EXPECT_FALSE(http::should_compress("text/html", o.min_size - 1, o));
  EXPECT_TRUE(http::should_compress("text/html", o.min_size, o));
  EXPECT_FALSE(http::should_compress("image/png", 1 << 20, o));
  o.min_size = 0;
  EXPECT_TRUE(http::should_compress("application/json", 0, o));
}

TEST(CompressionPolicy, Decide) {
  std::vector<http::header_field> h = {{"Accept-Encoding", "br;q=1, gzip;q=0.8"}};
  auto d = http::decide_compression(h, "application/json", 5000);
  EXPECT_EQ(d.coding, br);
  EXPECT_TRUE(d.vary);
  EXPECT_TRUE(d.acceptable);
  // Too small or not compressible: identity and no Vary (the answer does not vary).
  d = http::decide_compression(h, "application/json", 10);
  EXPECT_EQ(d.coding, id);
  EXPECT_FALSE(d.vary);
  d = http::decide_compression(h, "image/png", 5000);
  EXPECT_EQ(d.coding, id);
  EXPECT_FALSE(d.vary);
  // Identity because the client accepts nothing better: still Vary.
  std::vector<http::header_field> none = {{"Host", "h"}};
  d = http::decide_compression(none, "text/html", 5000);
  EXPECT_EQ(d.coding, id);
  EXPECT_TRUE(d.vary);
  // Offer restricted by the options.
  http::compression_options o;
  o.offer.br = false;
  d = http::decide_compression(h, "text/html", 5000, o);
  EXPECT_EQ(d.coding, gz);
  std::vector<http::header_field> refuse = {{"Accept-Encoding", "identity;q=0, br"}};
  d = http::decide_compression(refuse, "text/html", 5000, o);
  EXPECT_FALSE(d.acceptable);
  EXPECT_EQ(d.coding, id);
}

TEST(CompressionHeaders, VariantEtag) {
  EXPECT_EQ(http::variant_etag("\"abc\"", gz), "\"abc-gzip\"");
  EXPECT_EQ(http::variant_etag("W/\"abc\"", br), "W/\"abc-br\"");
  EXPECT_EQ(http::variant_etag("\"\"", br), "\"-br\"");
  EXPECT_EQ(http::variant_etag("\"abc\"", id), "\"abc\"");
  EXPECT_EQ(http::variant_etag("abc", gz), "abc");  // not an entity-tag: left alone
  EXPECT_EQ(http::variant_etag("\"", gz), "\"");
  EXPECT_EQ(http::variant_etag("", gz), "");
}

TEST(CompressionHeaders, Vary) {
  EXPECT_EQ(http::add_vary_accept_encoding(""), "Accept-Encoding");
  EXPECT_EQ(http::add_vary_accept_encoding("Origin"), "Origin, Accept-Encoding");
  EXPECT_EQ(http::add_vary_accept_encoding("Origin, accept-encoding"), "Origin, accept-encoding");
  EXPECT_EQ(http::add_vary_accept_encoding("*"), "*");
  EXPECT_EQ(http::add_vary_accept_encoding("Accept-Encoding-Extra"), "Accept-Encoding-Extra, Accept-Encoding");
}

}  // namespace
