// Provided-buffer rings: size validation, growth — a ring that starts with `count`
// buffers adds `count` more only when a receive found it empty with (nearly) every buffer
// handed out, never past its capacity, and the new buffers are distinct memory — and
// shrinking: when demand falls, returned buffers are parked, down to `count`, and reused
// before new memory is mapped.
#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/buf_ring.hpp>

#include <cstring>
#include <memory>
#include <set>
#include <system_error>

#include "test_support.hpp"

namespace {

using saturn::buf_ring;
using saturn::event_loop;

// A 4-buffer ring of 64-byte buffers that may grow to 16, on its own loop.
struct growing_ring : ::testing::Test {
  event_loop loop;
  std::error_code ec;
  std::unique_ptr<buf_ring> ring = saturn::ext::make_buf_ring(loop, 1, 4, 64, ec, 16);
  void SetUp() override { ASSERT_NE(ring, nullptr) << ec.message(); }
  /// As if the kernel handed out `n` buffers.
  void take(int n) {
    for (int i = 0; i < n; ++i)
      ring->note_taken();
  }
};

TEST(buf_ring, sizes_are_validated) {
  event_loop loop;
  std::error_code ec;
  EXPECT_EQ(saturn::ext::make_buf_ring(loop, 1, 6, 64, ec), nullptr);  // count not a power of two
  EXPECT_EQ(ec, std::errc::invalid_argument);
  EXPECT_EQ(saturn::ext::make_buf_ring(loop, 1, 8, 64, ec, 4), nullptr);  // capacity below count
  EXPECT_EQ(ec, std::errc::invalid_argument);
  EXPECT_EQ(saturn::ext::make_buf_ring(loop, 1, 8, 64, ec, 24), nullptr);  // capacity not a power of two
  EXPECT_EQ(ec, std::errc::invalid_argument);
  EXPECT_EQ(saturn::ext::make_buf_ring(loop, 1, 2, 64, ec, 256), nullptr);  // more than max_chunks chunks
  EXPECT_EQ(ec, std::errc::invalid_argument);
  EXPECT_EQ(saturn::ext::make_buf_ring(loop, 1, 8, 0, ec), nullptr);  // empty buffers
  EXPECT_EQ(ec, std::errc::invalid_argument);
  auto fixed = saturn::ext::make_buf_ring(loop, 1, 8, 64, ec);
  ASSERT_NE(fixed, nullptr) << ec.message();
  EXPECT_EQ(fixed->count(), 8u);
  EXPECT_EQ(fixed->capacity(), 8u);
}

TEST_F(growing_ring, grows_by_a_chunk_only_when_every_buffer_is_out) {
  EXPECT_EQ(ring->count(), 4u);
  EXPECT_EQ(ring->capacity(), 16u);
  // -ENOBUFS seen while buffers are still in the ring (an old CQE): no growth.
  EXPECT_FALSE(ring->grow_if_dry());
  take(2);
  EXPECT_FALSE(ring->grow_if_dry());
  take(2);  // all 4 out: really dry
  EXPECT_TRUE(ring->grow_if_dry());
  EXPECT_EQ(ring->count(), 8u);
  EXPECT_FALSE(ring->grow_if_dry()) << "one burst of -ENOBUFS must grow the ring once";
  take(4);
  EXPECT_TRUE(ring->grow_if_dry());
  take(4);
  EXPECT_TRUE(ring->grow_if_dry());
  EXPECT_EQ(ring->count(), 16u);
  take(4);
  EXPECT_FALSE(ring->grow_if_dry()) << "grew past its capacity";
  EXPECT_EQ(ring->count(), 16u);
  EXPECT_EQ(ring->mapped(), 16u);

  // Every buffer is its own writable 64 bytes.
  std::set<std::byte*> seen;
  for (std::uint16_t bid = 0; bid < 16; ++bid) {
    std::byte* p = ring->data(bid);
    std::memset(p, bid, 64);
    EXPECT_TRUE(seen.insert(p).second) << "buffer " << bid << " aliases another";
  }
  for (std::uint16_t bid = 0; bid < 16; ++bid)
    EXPECT_EQ(ring->data(bid)[63], std::byte(bid)) << "buffer " << bid << " overlaps the next";
  // (Nothing is recycled: the kernel took none of these, and the ring holds 16 entries.)
}

TEST_F(growing_ring, parks_returned_buffers_when_demand_falls_and_reuses_them_first) {
  take(4);
  ASSERT_TRUE(ring->grow_if_dry());
  ASSERT_EQ(ring->count(), 8u);
  // The 4 handed-out buffers come back. Three go back into the ring; the last leaves
  // fewer than an eighth of the 8 out, so it is parked.
  for (std::uint16_t bid = 0; bid < 4; ++bid)
    ring->recycle(bid);
  EXPECT_EQ(ring->outstanding(), 0u);
  EXPECT_EQ(ring->count(), 7u);
  EXPECT_EQ(ring->mapped(), 8u);
  // Dry again: the parked buffer goes back into circulation, no new chunk is mapped.
  take(7);
  EXPECT_TRUE(ring->grow_if_dry());
  EXPECT_EQ(ring->count(), 8u);
  EXPECT_EQ(ring->mapped(), 8u);
}

TEST_F(growing_ring, never_parks_below_its_initial_count) {
  take(4);
  for (std::uint16_t bid = 0; bid < 4; ++bid)
    ring->recycle(bid);
  EXPECT_EQ(ring->count(), 4u);
  EXPECT_EQ(ring->mapped(), 4u);
}

}  // namespace
