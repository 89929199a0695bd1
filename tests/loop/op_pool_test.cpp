// detail::op_pool (the loop's recycling allocator for callback operations): every size
// class hands out distinct, aligned, reusable blocks; larger or over-aligned requests go
// to operator new; and a plain callback operation fits the 32-byte class.
#include <saturn/loop/event_loop.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace {

using saturn::detail::op_pool;

TEST(op_pool, each_class_hands_out_distinct_aligned_blocks_and_reuses_them) {
  op_pool pool;
  for (std::size_t size : {8u, 32u, 33u, 64u, 100u, 128u, 200u, 256u}) {
    std::vector<void*> blocks;
    std::set<std::uintptr_t> seen;
    // More than one 64 KiB chunk's worth of the 32-byte class, so refill runs twice.
    for (int i = 0; i < 3000; ++i) {
      void* p = pool.allocate(size, 8);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 8, 0u);
      EXPECT_TRUE(seen.insert(reinterpret_cast<std::uintptr_t>(p)).second) << "block handed out twice";
      std::memset(p, 0xab, size);  // ASan: the whole block is ours
      blocks.push_back(p);
    }
    for (void* p : blocks)
      pool.deallocate(p, size, 8);
    // Freed blocks come back (LIFO) before any new memory is carved.
    void* again = pool.allocate(size, 8);
    EXPECT_EQ(again, blocks.back());
    pool.deallocate(again, size, 8);
  }
}

TEST(op_pool, large_and_over_aligned_requests_use_operator_new) {
  op_pool pool;
  void* big = pool.allocate(4096, 8);
  std::memset(big, 0, 4096);
  pool.deallocate(big, 4096, 8);
  void* aligned = pool.allocate(64, 128);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 128, 0u);
  pool.deallocate(aligned, 64, 128);
}

TEST(op_pool, a_plain_callback_operation_fits_the_smallest_class) {
  int counter = 0;
  auto fn = [&counter](int) { ++counter; };
  using plain = saturn::detail::callback_op<decltype(fn)>;
  using with_timeout = saturn::detail::callback_op<decltype(fn), true>;
  EXPECT_LE(sizeof(plain), 32u);
  EXPECT_GE(sizeof(with_timeout), sizeof(plain) + sizeof(saturn::kernel_timespec));
}

}  // namespace
