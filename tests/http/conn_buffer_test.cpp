// The connection receive buffer of src/http/conn_buffer.hpp alone: a keep-alive connection
// streaming body after body keeps one buffer of at most head + window, whatever came in
// with each head, and pin() never loses or moves the bytes it keeps (checked against a
// copy of what was written).
#include "http/conn_buffer.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>

namespace {

using saturn::http::detail::conn_buffer;

constexpr std::size_t k_initial = 16 * 1024;
constexpr std::size_t k_window = 64 * 1024 + 4096 + 64;  // window + chunk line + slack, as the server pins

/// Fills the free space after the data (what one recv into it may bring), at most `upto`
/// bytes, with random bytes (a slice of a random pool), appending them to `mirror` too;
/// returns how many.
std::size_t fill(conn_buffer& in, std::string& mirror, std::mt19937& rng, std::size_t upto) {
  static const std::string pool = [] {
    std::mt19937 r(1);
    std::string p(1 << 20, '\0');
    for (char& c : p)
      c = static_cast<char>('a' + r() % 26);
    return p;
  }();
  auto room = in.free_space();
  const std::size_t n = std::min({room.size(), upto, pool.size() / 2});
  const std::size_t at = rng() % (pool.size() / 2);
  std::memcpy(room.data(), pool.data() + at, n);
  mirror.append(pool, at, n);
  in.commit(n);
  return n;
}

TEST(http_conn_buffer, streamed_bodies_keep_one_window) {
  std::mt19937 rng(7);
  conn_buffer in(k_initial, std::size_t{1} << 32);
  std::size_t largest_head = 0;
  for (int request = 0; request < 200; ++request) {
    // The head read: a recv into whatever room the buffer has (reserve(4096) first, as the
    // connection does), which brings the head and as much body as fits.
    ASSERT_TRUE(in.reserve(4096));
    std::string mirror(in.data(), in.size());
    const std::size_t head = 200 + rng() % 3000;
    largest_head = std::max(largest_head, head);
    fill(in, mirror, rng, rng() % 2 == 0 ? head : std::size_t{1} << 30);
    if (in.size() < head)  // a short read: the rest of the head comes next
      fill(in, mirror, rng, head - in.size());
    ASSERT_GE(in.size(), head);
    ASSERT_TRUE(in.pin(head, k_window));
    ASSERT_EQ(std::string(in.data(), in.size()), mirror) << "request " << request;
    // The bound: the largest head plus one window (the initial size if that is larger).
    EXPECT_LE(in.capacity(), std::max(k_initial, largest_head + k_window)) << "request " << request;
    // One window of room behind the head once the body bytes read with it are taken.
    in.truncate(head);
    EXPECT_TRUE(in.fits(k_window));
    // The handler takes the body piece by piece, each read into the room behind the head.
    for (int piece = 0; piece < 3; ++piece) {
      std::string body;
      ASSERT_GT(fill(in, body, rng, std::size_t{1} << 30), 0u);
      EXPECT_EQ(std::string(in.data() + head, in.size() - head), body);
      in.truncate(head);
    }
    in.consume(head);  // the request is done; some of the next one may follow
    if (rng() % 2 == 0) {
      std::string next;
      fill(in, next, rng, rng() % 5000);
    }
  }
}

TEST(http_conn_buffer, pin_keeps_more_data_than_one_window) {
  // A buffer that grew before (a long pipelined batch) may hold more body bytes than one
  // window behind a small head: pin keeps them all, in place, without growing.
  std::mt19937 rng(11);
  conn_buffer in(k_initial, std::size_t{1} << 32);
  std::string mirror;
  while (in.size() < 3 * k_window) {
    ASSERT_TRUE(in.reserve(64 * 1024));
    fill(in, mirror, rng, 64 * 1024);
  }
  in.consume(100);
  mirror.erase(0, 100);
  const std::size_t cap = in.capacity();
  ASSERT_TRUE(in.pin(300, k_window));
  EXPECT_EQ(in.capacity(), cap);
  EXPECT_EQ(std::string(in.data(), in.size()), mirror);
}

TEST(http_conn_buffer, pin_refuses_past_the_bound) {
  // The bound is on what must be kept: a head longer than it is refused, a window behind
  // a shorter one is given (the window's own size is the caller's choice).
  conn_buffer in(k_initial, 8 * 1024);
  ASSERT_TRUE(in.reserve(4096));
  std::string mirror;
  std::mt19937 rng(3);
  fill(in, mirror, rng, 10000);
  EXPECT_FALSE(in.pin(10000, 16 * 1024));
  EXPECT_TRUE(in.pin(2000, 64 * 1024));
  EXPECT_GE(in.capacity(), 2000u + 64 * 1024);
  EXPECT_EQ(std::string(in.data(), in.size()), mirror);
}

}  // namespace
