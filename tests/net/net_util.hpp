// Helpers shared by the net tests: an echo server task and a deterministic byte pattern.
#pragma once

#include <saturn/net.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/this_task.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace net_test {

using saturn::task;
namespace net = saturn::net;

/// Bytes that depend on their position and a seed (a reordering or loss shows).
inline std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v[i] = static_cast<std::byte>(x);
  }
  return v;
}

/// Echoes through receive() (provided buffers) until end of stream or error; counts.
struct echo_stats {
  std::size_t bytes = 0;
  int last_error = 0;
  bool eof = false;
};

inline task<void> echo_stream(net::stream_socket s, echo_stats* st) {
  for (;;) {
    auto rx = s.receive();
    auto r = co_await rx;
    if (!r) {
      if (st != nullptr)
        st->last_error = r.err().code.value();
      break;
    }
    if (r->empty()) {
      if (st != nullptr)
        st->eof = true;
      break;
    }
    auto tx = s.send(*r);
    auto w = co_await tx;
    if (!w) {
      if (st != nullptr)
        st->last_error = w.err().code.value();
      break;
    }
    if (st != nullptr)
      st->bytes += *w;
  }
}

/// Reads exactly n bytes with recv(); fewer at end of stream or on error.
inline task<std::vector<std::byte>> read_exactly(net::stream_socket& s, std::size_t n) {
  std::vector<std::byte> out(n);
  std::size_t got = 0;
  while (got < n) {
    auto aw = s.recv(std::span<std::byte>(out.data() + got, n - got));
    auto r = co_await aw;
    if (!r || *r == 0)
      break;
    got += *r;
  }
  out.resize(got);
  co_return out;
}

/// A connected TCP pair on 127.0.0.1 (the listener is closed once both ends exist).
struct tcp_pair {
  net::tcp_stream client;
  net::tcp_stream server;
};
inline task<saturn::result<tcp_pair>> connect_tcp_pair() {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!l)
    co_return l.err();
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(l->local_address()->port()));
  if (!c)
    co_return c.err();
  auto s = co_await l->accept();
  if (!s)
    co_return s.err();
  co_return tcp_pair{std::move(*c), std::move(*s)};
}

/// `s`'s characters as bytes (for send).
inline std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

}  // namespace net_test

/// gtest's ASSERT_* return from the function, which a coroutine cannot: these co_return.
#define CO_ASSERT_TRUE(c)                                 \
  do {                                                    \
    if (!(c)) {                                           \
      ADD_FAILURE() << "assertion failed: " #c;           \
      co_return;                                          \
    }                                                     \
  } while (0)
#define CO_ASSERT_OK(r)                                                        \
  do {                                                                         \
    if (!(r).has_value()) {                                                    \
      ADD_FAILURE() << #r " failed: " << (r).err().message();                  \
      co_return;                                                               \
    }                                                                          \
  } while (0)
