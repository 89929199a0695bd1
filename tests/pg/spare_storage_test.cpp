// pg::rows' per-thread spare storage (src/pg/spare_storage.cpp) against a real
// PostgreSQL: a big result's buffers are reused by the next big result on the same
// thread, a small result never takes them, release_spare_storage() frees them, and copies
// and moves of a result stay intact whatever happens to the storage of the others.
#include "pg/pg_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using pg_test::rt;

constexpr const char* k_big = "SELECT id, name, tags FROM items ORDER BY id";  // 100,000 rows
constexpr std::size_t k_min_spare = 64 * 1024;

std::int64_t id_sum(const pg::rows& r) {
  std::int64_t sum = 0;
  for (pg::row row : r)
    sum += row.get<int>(0).value();
  return sum;
}

constexpr std::int64_t k_big_sum = 100000LL * 100001LL / 2;

TEST(pg_spare_storage, a_big_result_is_read_into_the_buffers_the_last_one_left) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    pg::release_spare_storage();
    std::uintptr_t first_data = 0;
    {
      auto r = co_await c->query(k_big);
      EXPECT_TRUE(r) << r.err().what();
      if (!r)
        co_return;
      EXPECT_EQ(r->size(), 100000u);
      EXPECT_EQ(id_sum(*r), k_big_sum);
      first_data = reinterpret_cast<std::uintptr_t>(r->m_data.data());
    }  // freed here: its buffers become this thread's spare
    EXPECT_GE(pg::detail::spare_storage_bytes(), k_min_spare);
    auto again = co_await c->query(k_big);
    EXPECT_TRUE(again) << again.err().what();
    if (!again)
      co_return;
    EXPECT_EQ(again->size(), 100000u);
    EXPECT_EQ(id_sum(*again), k_big_sum);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again->m_data.data()), first_data)
        << "the second result did not move into the first one's buffer";
    EXPECT_LT(pg::detail::spare_storage_bytes(), k_min_spare) << "the result took the spare: none is left";
  }());
}

TEST(pg_spare_storage, a_small_result_leaves_a_big_spare_alone) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    {
      auto r = co_await c->query(k_big);
      EXPECT_TRUE(r) << r.err().what();
    }
    const std::size_t spare = pg::detail::spare_storage_bytes();
    EXPECT_GE(spare, k_min_spare);
    {
      auto small = co_await c->query("SELECT id, name FROM items WHERE id <= 10 ORDER BY id");
      EXPECT_TRUE(small) << small.err().what();
      if (small) {
        EXPECT_EQ(small->size(), 10u);
        EXPECT_EQ(id_sum(*small), 55);
        EXPECT_LT(small->m_data.capacity(), k_min_spare);
      }
      EXPECT_EQ(pg::detail::spare_storage_bytes(), spare);
    }
    EXPECT_EQ(pg::detail::spare_storage_bytes(), spare) << "a small result's buffers replaced the big spare";
    pg::release_spare_storage();
    EXPECT_EQ(pg::detail::spare_storage_bytes(), 0u);
  }());
}

TEST(pg_spare_storage, copies_and_moves_keep_their_rows_when_others_are_freed) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    pg::rows copy;
    pg::rows moved;
    {
      auto r = co_await c->query(k_big);
      EXPECT_TRUE(r) << r.err().what();
      if (!r)
        co_return;
      copy = *r;
      pg::rows tmp = *r;
      moved = std::move(tmp);
    }  // the original and the moved-from one are freed; one of them feeds the spare
    // A new big result fills the spare's buffer: the copies must not share it.
    auto next = co_await c->query("SELECT id + 1, name, tags FROM items ORDER BY id");
    EXPECT_TRUE(next) << next.err().what();
    if (next) {
      EXPECT_EQ(id_sum(*next), k_big_sum + 100000);
    }
    EXPECT_EQ(copy.size(), 100000u);
    EXPECT_EQ(id_sum(copy), k_big_sum);
    EXPECT_EQ(moved.size(), 100000u);
    EXPECT_EQ(id_sum(moved), k_big_sum);
    EXPECT_EQ(copy[99999].get<std::string>(1).value(), moved[99999].get<std::string>(1).value());
  }());
}

}  // namespace
