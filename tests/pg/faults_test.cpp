// Faults against a real PostgreSQL: a deadline that cancels the query on the server, the
// server killed mid-query (and the pool recovering once it is back), 1,000 tasks on a
// pool of 16.
#include "pg/pg_util.hpp"

#include <saturn/task/when_all.hpp>

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace {

using pg_test::rt;

/// After a cancelled statement: the connection is not broken and answers the next query
/// right (it is in sync with the server).
task<> expect_usable(pg::connection& c) {
  EXPECT_FALSE(c.is_broken());
  auto ok = co_await c.query("SELECT $1::int + 1", 1);
  EXPECT_TRUE(ok) << ok.err().what();
  if (ok) {
    EXPECT_EQ((*ok)[0].get<int>(0).value(), 2);
  }
}

int running_sleeps() {
  const std::string n = pg_test::cluster::get().psql(
      "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'");
  return n.empty() ? -1 : std::stoi(n);
}

TEST(pg_faults, deadline_cancels_the_query_on_the_server) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = co_await pg::with_deadline(200ms, c->query("SELECT pg_sleep(10)"));
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(r);
    if (!r) {
      EXPECT_EQ(r.err().kind, pg::errc::cancelled) << r.err().what();
    }
    EXPECT_LT(took, 5s);
    EXPECT_EQ(running_sleeps(), 0);
    // The connection is usable again, and in sync.
    co_await expect_usable(*c);
    // saturn's with_timeout works the same way.
    auto w = co_await saturn::with_timeout(100ms, c->query("SELECT pg_sleep(10)"));
    EXPECT_FALSE(w);
    EXPECT_EQ(running_sleeps(), 0);
    auto ok2 = co_await c->query("SELECT 7");
    EXPECT_TRUE(ok2) << ok2.err().what();
  }());
}

// A deadline in the middle of a pipeline over TCP, with requests queued behind the
// running statement: that statement is cancelled on the server, the pipeline reads every
// other answer and ends within bounds, and the connection is usable and in sync.
TEST(pg_faults, deadline_cancels_a_pipeline_over_tcp) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    std::vector<pg::statement> qs;
    for (int i = 0; i < 6001; ++i) {
      pg::statement s;
      if (i == 3000) {
        s.sql = "SELECT pg_sleep(10)";
      } else {
        s.sql = "SELECT price FROM items WHERE id = $1";
        s.args.add(std::int32_t{1 + i});
      }
      qs.push_back(std::move(s));
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = co_await saturn::with_timeout(300ms, c->pipeline(std::move(qs)));
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(r);
    EXPECT_LT(took, 5s);
    EXPECT_EQ(running_sleeps(), 0);
    co_await expect_usable(*c);
  }());
}

TEST(pg_faults, server_killed_mid_query_then_the_pool_recovers) {
  PG_REQUIRE_CLUSTER();
  auto& cl = pg_test::cluster::get();
  // Through the cluster's private socket directory: while it is down its TCP port is free,
  // and another test's cluster (ctest runs them side by side) may take it.
  pg::pool db(cl.unix_socket("app"), {.max_size = 4});
  rt().block_on([&]() -> task<> {
    // Warm the pool: four idle connections.
    std::vector<task<pg::result<pg::rows>>> warm;
    for (int i = 0; i < 4; ++i)
      warm.push_back(db.query("SELECT pg_sleep(0.05)"));
    auto w = co_await saturn::when_all(std::move(warm));
    for (auto& x : w)
      EXPECT_TRUE(x) << x.err().what();
    std::thread killer([&] {
      std::this_thread::sleep_for(300ms);
      cl.stop_immediate();
    });
    auto r = co_await db.query("SELECT pg_sleep(10)");
    killer.join();
    EXPECT_FALSE(r);
    if (!r) {
      EXPECT_TRUE(r.err().kind == pg::errc::connection || r.err().kind == pg::errc::server) << r.err().what();
    }
    // While the server is down, queries fail with a clear error and do not hang.
    auto down = co_await db.query("SELECT 1");
    EXPECT_FALSE(down);
    if (!down) {
      EXPECT_EQ(down.err().kind, pg::errc::connection) << down.err().what();
    }
    EXPECT_TRUE(cl.start());
    // Back: every pooled connection works again (stale ones are replaced).
    std::vector<task<pg::result<pg::rows>>> after;
    for (int i = 0; i < 8; ++i)
      after.push_back(db.query("SELECT count(*) FROM items"));
    auto a = co_await saturn::when_all(std::move(after));
    for (auto& x : a) {
      EXPECT_TRUE(x) << x.err().what();
      if (x) {
        EXPECT_EQ((*x)[0].get<std::int64_t>(0).value(), 100000);
      }
    }
    EXPECT_LE(db.open_count(), 4u);
  }());
}

TEST(pg_faults, thousand_tasks_on_a_pool_of_sixteen) {
  PG_REQUIRE_CLUSTER();
  pg::pool db(pg_test::cluster::get().tcp("app"), {.max_size = 16});
  rt().block_on([&]() -> task<> {
    std::vector<task<pg::result<pg::rows>>> tasks;
    for (int i = 0; i < 1000; ++i)
      tasks.push_back(db.query("SELECT $1::int * 2, pg_backend_pid()", i));
    auto all = co_await saturn::when_all(std::move(tasks));
    int answered = 0;
    std::set<int> pids;
    for (std::size_t i = 0; i < all.size(); ++i) {
      auto& x = all[i];
      EXPECT_TRUE(x) << x.err().what();
      if (x && (*x)[0].get<int>(0).value() == static_cast<int>(i) * 2) {
        ++answered;
        pids.insert((*x)[0].get<int>(1).value());
      }
    }
    EXPECT_EQ(answered, 1000);
    EXPECT_LE(pids.size(), 16u);
    EXPECT_LE(db.open_count(), 16u);
  }());
}

TEST(pg_faults, pool_is_fifo_under_contention) {
  PG_REQUIRE_CLUSTER();
  pg::pool db(pg_test::cluster::get().tcp("app"), {.max_size = 1});
  rt().block_on([&]() -> task<> {
    std::vector<int> order;
    auto held = co_await db.acquire();
    EXPECT_TRUE(held);
    std::vector<saturn::join_handle<void>> waiters;
    for (int i = 0; i < 20; ++i) {
      auto body = [](pg::pool* p, std::vector<int>* out, int id) -> task<> {
        auto c = co_await p->acquire();
        if (c)
          out->push_back(id);
      };
      waiters.push_back(saturn::spawn(body(&db, &order, i)));
      co_await saturn::yield();
    }
    { auto drop = std::move(held); }
    for (auto& h : waiters)
      co_await std::move(h);
    std::vector<int> want(20);
    for (int i = 0; i < 20; ++i)
      want[i] = i;
    EXPECT_EQ(order, want);
  }());
}

TEST(pg_faults, pool_size_from_environment) {
  ::setenv("DATABASE_MAX_CONN", "7", 1);
  pg::pool db(pg::config{}, {});
  EXPECT_EQ(db.max_size(), 7u);
  ::unsetenv("DATABASE_MAX_CONN");
  pg::pool other(pg::config{}, {.max_size = 3});
  EXPECT_EQ(other.max_size(), 3u);
}

}  // namespace
