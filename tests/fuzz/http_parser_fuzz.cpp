// libFuzzer target for saturn::http::request_parser (built with clang++-14
// -fsanitize=fuzzer,address,undefined by tests/fuzz/CMakeLists.txt or `make fuzz`).
//
// The input is a byte stream of pipelined requests. It is parsed twice — whole, and fed in
// chunks whose sizes come from the input's first bytes, the way a connection appends to
// its buffer and drops each completed request — and both parses must agree exactly (the
// same requests, the same error), every view must lie inside the buffer, and consumed()
// must never exceed what was given.
#include <saturn/http/parser.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using saturn::http::parse_status;
using saturn::http::request_parser;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "http_parser_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

bool inside(std::string_view v, const char* b, std::size_t n) {
  return v.empty() || (v.data() >= b && v.data() + v.size() <= b + n);
}

struct run {
  std::vector<std::string> requests;  // a digest of each request
  int error = 0;
};

std::string digest(const saturn::http::request& r, const char* b, std::size_t n) {
  check(inside(r.method, b, n) && inside(r.target, b, n) && inside(r.body().view(), b, n), "view outside the buffer");
  std::string d;
  d.append(r.method).append(" ").append(r.target).append(" ").append(r.path).append("?").append(r.raw_query);
  d += static_cast<char>('0' + r.version_minor);
  d += r.keep_alive ? 'k' : 'c';
  for (auto& h : r.headers()) {
    check(inside(h.name, b, n) && inside(h.value, b, n), "header view outside the buffer");
    d.append("|").append(h.name).append(":").append(h.value);
  }
  d.append("#").append(r.body().view());
  return d;
}

run parse_stream(const std::uint8_t* data, std::size_t size, const std::vector<std::size_t>& steps) {
  saturn::http::parser_limits limits;
  limits.max_body = 4096;
  request_parser p(limits);
  run out;
  std::string buf;
  std::size_t fed = 0, step = 0;
  while (fed < size) {
    std::size_t n = steps.empty() ? size : steps[step++ % steps.size()];
    if (n > size - fed)
      n = size - fed;
    buf.append(reinterpret_cast<const char*>(data) + fed, n);
    fed += n;
    for (;;) {
      parse_status s = p.parse(buf.data(), buf.size());
      if (s == parse_status::complete) {
        check(p.consumed() > 0 && p.consumed() <= buf.size(), "consumed() out of range");
        out.requests.push_back(digest(p.get(), buf.data(), buf.size()));
        buf.erase(0, p.consumed());
        p.reset();
        if (buf.empty())
          break;
      } else if (s == parse_status::error) {
        int st = p.error_status();
        check(st == 400 || st == 413 || st == 414 || st == 431 || st == 501 || st == 505, "unexpected error status");
        out.error = st;
        return out;
      } else {
        break;
      }
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte chooses the chunk sizes of the second parse (1..16 bytes, cycling).
  std::vector<std::size_t> steps;
  if (size > 0) {
    unsigned seed = data[0];
    for (int i = 0; i < 8; ++i) {
      seed = seed * 1103515245u + 12345u;
      steps.push_back(1 + (seed >> 16) % 16);
    }
  }
  run whole = parse_stream(data, size, {});
  run split = parse_stream(data, size, steps);
  check(whole.error == split.error, "whole and split parses end differently");
  check(whole.requests == split.requests, "whole and split parses give different requests");
  return 0;
}
