// pg::connection against a real PostgreSQL (tests/pg/cluster.hpp): authentication (trust
// over TCP and a Unix socket, md5, scram-sha-256, a wrong password), typed parameters and
// results, NULLs, the statement cache, errors with SQLSTATE, pipelining, streaming,
// transactions and LISTEN/NOTIFY.
#include "pg/pg_util.hpp"
#include "pg/state.hpp"

#include <gtest/gtest.h>

namespace {

using pg_test::rt;

TEST(pg_connection, trust_over_tcp_and_unix_socket) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto& cl = pg_test::cluster::get();
    for (const pg::config& cfg : {cl.tcp("app"), cl.unix_socket("app")}) {
      auto c = co_await pg::connection::connect(cfg);
      EXPECT_TRUE(c) << c.err().what();
      if (!c)
        continue;
      EXPECT_GT(c->backend_pid(), 0);
      EXPECT_EQ(c->parameter("server_version").substr(0, 2), "15");
      auto r = co_await c->query("SELECT current_user");
      EXPECT_TRUE(r) << r.err().what();
      if (r) {
        EXPECT_EQ((*r)[0].get<std::string>(0).value(), "app");
      }
      co_await c->close();
    }
  }());
}

TEST(pg_connection, md5_scram_and_url) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto& cl = pg_test::cluster::get();
    auto m = co_await pg::connection::connect(cl.tcp("md5_user", "md5-secret"));
    EXPECT_TRUE(m) << m.err().what();
    auto s = co_await pg::connection::connect(cl.tcp("scram_user", "scram-secret"));
    EXPECT_TRUE(s) << s.err().what();
    const std::string url = "postgres://scram_user:scram-secret@127.0.0.1:" + std::to_string(cl.port()) + "/postgres";
    auto u = co_await pg::connection::connect(url);
    EXPECT_TRUE(u) << u.err().what();
    if (u) {
      auto r = co_await u->query("SELECT count(*) FROM items");
      EXPECT_TRUE(r) << r.err().what();
      if (r) {
        EXPECT_EQ((*r)[0].get<std::int64_t>(0).value(), 100000);
      }
    }
  }());
}

TEST(pg_connection, wrong_password_is_an_auth_error) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto& cl = pg_test::cluster::get();
    for (const pg::config& cfg : {cl.tcp("md5_user", "nope"), cl.tcp("scram_user", "nope")}) {
      auto c = co_await pg::connection::connect(cfg);
      EXPECT_FALSE(c);
      if (!c) {
        EXPECT_EQ(c.err().kind, pg::errc::auth) << c.err().what();
        EXPECT_EQ(c.err().sqlstate, "28P01") << c.err().what();
        EXPECT_NE(c.err().message.find("password authentication failed"), std::string::npos) << c.err().what();
      }
    }
  }());
}

TEST(pg_connection, typed_parameters_and_results_round_trip) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    const pg::bytea blob{{std::byte{0}, std::byte{0xff}, std::byte{7}}};
    const pg::timestamp when{std::chrono::microseconds(1700000000123456LL)};
    auto r = co_await c->query(
        "SELECT $1::int2, $2::int4, $3::int8, $4::float4, $5::float8, $6::bool, $7::text, $8::bytea, $9::timestamptz,"
        " $10::jsonb, $11::json, $12::int4, 1.5::numeric, '2024-01-02 03:04:05'::timestamp",
        std::int16_t{-7}, std::int32_t{123456}, std::int64_t{1} << 40, 2.5f, 3.25, true, std::string("héllo"), blob,
        when, std::string(R"({"a": [1, 2]})"), "[true]", std::optional<std::int32_t>{});
    EXPECT_TRUE(r) << r.err().what();
    if (!r)
      co_return;
    EXPECT_EQ(r->size(), 1u);
    if (r->size() != 1)
      co_return;
    pg::row row = (*r)[0];
    EXPECT_EQ(row.get<std::int16_t>(0).value(), -7);
    EXPECT_EQ(row.get<std::int32_t>(1).value(), 123456);
    EXPECT_EQ(row.get<std::int64_t>(2).value(), std::int64_t{1} << 40);
    EXPECT_EQ(row.get<float>(3).value(), 2.5f);
    EXPECT_EQ(row.get<double>(4).value(), 3.25);
    EXPECT_EQ(row.get<bool>(5).value(), true);
    EXPECT_EQ(row.get<std::string>(6).value(), "héllo");
    EXPECT_EQ(row.get<pg::bytea>(7).value(), blob);
    EXPECT_EQ(row.get<pg::timestamp>(8).value(), when);
    EXPECT_EQ(row.get<std::string>(9).value(), R"({"a": [1, 2]})");
    EXPECT_EQ(row.get<std::string>(10).value(), "[true]");
    EXPECT_EQ(row.get<std::optional<std::int32_t>>(11).value(), std::nullopt);
    auto null_as_int = row.get<std::int32_t>(11);
    EXPECT_FALSE(null_as_int);
    if (!null_as_int) {
      EXPECT_EQ(null_as_int.err().kind, pg::errc::null);
    }
    EXPECT_EQ(row.get<double>(12).value(), 1.5);
    EXPECT_EQ(row.get<std::string>(12).value(), "1.5");
    EXPECT_EQ(row.get<pg::timestamp>(13).value().time_since_epoch(), std::chrono::microseconds(1704164645000000LL));
    auto narrow = row.get<std::int16_t>(2);  // 2^40 does not fit
    EXPECT_FALSE(narrow);
    auto wrong = row.get<bool>(1);
    EXPECT_FALSE(wrong);
    if (!wrong) {
      EXPECT_EQ(wrong.err().kind, pg::errc::type);
    }
    EXPECT_EQ(row.get<std::int64_t>(1).value(), 123456);  // widening is fine
    // string_view: a view of the row's bytes for text-like columns, an error where the
    // text would have to be made (a binary integer).
    EXPECT_EQ(row.get<std::string_view>(6).value(), "héllo");
    EXPECT_EQ(row.get<std::string_view>(9).value(), R"({"a": [1, 2]})");
    EXPECT_EQ(row.get<std::optional<std::string_view>>(11).value(), std::nullopt);
    auto int_as_view = row.get<std::string_view>(1);
    EXPECT_FALSE(int_as_view);
    if (!int_as_view) {
      EXPECT_EQ(int_as_view.err().kind, pg::errc::type);
    }
  }());
}

TEST(pg_connection, the_items_query_of_async_db) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    const char* sql =
        "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count FROM items"
        " WHERE price BETWEEN $1 AND $2 LIMIT $3";
    auto r = co_await c->query(sql, 10, 50, std::int64_t{20});
    EXPECT_TRUE(r) << r.err().what();
    if (!r)
      co_return;
    EXPECT_EQ(r->size(), 20u);
    EXPECT_EQ(r->command_tag(), "SELECT 20");
    for (pg::row row : *r) {
      const int price = row.get<int>(3).value();
      EXPECT_GE(price, 10);
      EXPECT_LE(price, 50);
      const int id = row.get<int>(0).value();
      EXPECT_EQ(price, 1 + (id * 37) % 100);
      const std::string tags = row.get<std::string>(6).value();
      EXPECT_EQ(tags, id % 2 == 0 ? R"(["fast", "new"])" : R"(["sale"])");
      EXPECT_EQ(row.get<bool>(5).value(), id % 3 != 0);
    }
    // The statement is prepared once and reused.
    const std::size_t prepared = c->prepared_count();
    for (int i = 0; i < 5; ++i) {
      auto again = co_await c->query(sql, 1, 100, std::int64_t{1});
      EXPECT_TRUE(again);
    }
    EXPECT_EQ(c->prepared_count(), prepared);
    auto stmts = co_await c->query("SELECT count(*) FROM pg_prepared_statements");
    EXPECT_TRUE(stmts);
    if (stmts) {
      EXPECT_EQ(static_cast<std::size_t>((*stmts)[0].get<std::int64_t>(0).value()), c->prepared_count());
    }
  }());
}

TEST(pg_connection, bad_sql_is_an_error_value_and_the_connection_stays_usable) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    auto a = co_await c->query("SELEKT 1");
    EXPECT_FALSE(a);
    if (!a) {
      EXPECT_EQ(a.err().kind, pg::errc::server);
      EXPECT_EQ(a.err().sqlstate, "42601");
    }
    auto b = co_await c->query("SELECT * FROM no_such_table");
    EXPECT_FALSE(b);
    if (!b) {
      EXPECT_EQ(b.err().sqlstate, "42P01");
    }
    auto d = co_await c->query("SELECT 1 / $1", 0);
    EXPECT_FALSE(d);
    if (!d) {
      EXPECT_EQ(d.err().sqlstate, "22012");
    }
    auto ok = co_await c->query("SELECT 41 + $1", 1);
    EXPECT_TRUE(ok) << ok.err().what();
    if (ok) {
      EXPECT_EQ((*ok)[0].get<int>(0).value(), 42);
    }
    EXPECT_FALSE(c->is_broken());
    // A duplicate key carries DETAIL.
    auto t = co_await c->execute("CREATE TEMP TABLE u (id int PRIMARY KEY); INSERT INTO u VALUES (1)");
    EXPECT_TRUE(t) << t.err().what();
    auto dup = co_await c->query("INSERT INTO u VALUES ($1)", 1);
    EXPECT_FALSE(dup);
    if (!dup) {
      EXPECT_EQ(dup.err().sqlstate, "23505");
      EXPECT_NE(dup.err().detail.find("(id)=(1)"), std::string::npos) << dup.err().what();
    }
  }());
}

TEST(pg_connection, pipeline_sends_everything_before_reading) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg::connection::connect(pg_test::cluster::get().unix_socket("app"));
    EXPECT_TRUE(c) << c.err().what();
    if (!c)
      co_return;
    std::vector<pg::statement> qs;
    for (int i = 0; i < 10000; ++i) {
      pg::statement s;
      s.sql = i == 500 ? "SELECT 1/0" : "SELECT price FROM items WHERE id = $1";
      if (i != 500)
        s.args.add(std::int32_t{1 + i});
      qs.push_back(std::move(s));
    }
    auto r = co_await c->pipeline(std::move(qs));
    EXPECT_TRUE(r) << r.err().what();
    if (!r)
      co_return;
    EXPECT_EQ(r->size(), 10000u);
    std::size_t good = 0;
    for (std::size_t i = 0; i < r->size(); ++i) {
      if (i == 500) {
        EXPECT_FALSE((*r)[i]);
        continue;
      }
      auto& one = (*r)[i];
      if (one && one->size() == 1 && (*one)[0].get<int>(0).value() == 1 + static_cast<int>((i + 1) * 37 % 100))
        ++good;
    }
    EXPECT_EQ(good, 9999u);
  }());
}

// A pipeline over TCP in which most queries are never sent (their Parse failed) and the
// rest get the smallest answers (no rows): every query gets its answer, in order, and a
// pipeline that waited for bytes that never come would fail at the deadline.
TEST(pg_connection, pipeline_over_tcp_with_unsent_requests_and_tiny_answers_completes) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    std::vector<pg::statement> qs;
    for (int i = 0; i < 4300; ++i) {
      pg::statement s;
      if (i < 4000) {
        s.sql = "SELEC 1";  // fails at Parse: nothing is sent for it
      } else {
        s.sql = "SELECT id FROM items WHERE id = $1";  // no such id: no rows
        s.args.add(std::int32_t{-i});
      }
      qs.push_back(std::move(s));
    }
    auto r = co_await saturn::with_timeout(20s, c->pipeline(std::move(qs)));
    EXPECT_TRUE(r) << "the pipeline did not finish in 20 s";
    if (!r)
      co_return;
    EXPECT_TRUE(*r) << r->err().what();
    if (!*r)
      co_return;
    EXPECT_EQ((*r)->size(), 4300u);
    std::size_t parse_errors = 0, empty = 0;
    for (const auto& one : **r) {
      if (!one && one.err().sqlstate == "42601")
        ++parse_errors;
      else if (one && one->size() == 0)
        ++empty;
    }
    EXPECT_EQ(parse_errors, 4000u);
    EXPECT_EQ(empty, 300u);
    auto after = co_await c->query("SELECT 1");
    EXPECT_TRUE(after) << after.err().what();
  }());
}

// Statements that fail to prepare (a syntax error), repeated, among new and cached ones:
// each failing query gets the server's error, every other its answer, in order, and a
// second pipeline reuses the statements the first prepared.
TEST(pg_connection, pipeline_prepares_each_new_statement_once_and_reports_parse_errors) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg::connection::connect(pg_test::cluster::get().unix_socket("app"));
    EXPECT_TRUE(c) << c.err().what();
    if (!c)
      co_return;
    auto warm = co_await c->query("SELECT price FROM items WHERE id = $1", std::int32_t{1});
    EXPECT_TRUE(warm) << warm.err().what();
    const std::size_t cached = c->prepared_count();
    auto batch = [] {
      std::vector<pg::statement> qs;
      for (int i = 0; i < 30; ++i) {
        pg::statement s;
        if (i % 10 == 3) {
          s.sql = "SELEC price FROM items";  // fails at Parse
        } else if (i % 2 == 0) {
          s.sql = "SELECT price FROM items WHERE id = $1";  // cached by the query above
          s.args.add(std::int32_t{1 + i});
        } else {
          s.sql = "SELECT price, $2::int8 FROM items WHERE id = $1";  // new
          s.args.add(std::int32_t{1 + i});
          s.args.add(std::int64_t{i});
        }
        qs.push_back(std::move(s));
      }
      return qs;
    };
    for (int round = 0; round < 2; ++round) {
      auto r = co_await c->pipeline(batch());
      EXPECT_TRUE(r) << r.err().what();
      if (!r)
        co_return;
      EXPECT_EQ(r->size(), 30u);
      for (std::size_t i = 0; i < r->size(); ++i) {
        auto& one = (*r)[i];
        if (i % 10 == 3) {
          EXPECT_FALSE(one);
          if (!one) {
            EXPECT_EQ(one.err().sqlstate, "42601") << one.err().what();
          }
          continue;
        }
        const bool one_row = one && one->size() == 1;
        EXPECT_TRUE(one_row) << i;
        if (!one_row)
          continue;
        EXPECT_EQ((*one)[0].get<int>(0).value(), 1 + static_cast<int>((i + 1) * 37 % 100)) << i;
        if (i % 2 == 1) {
          EXPECT_EQ((*one)[0].get<std::int64_t>(1).value(), static_cast<std::int64_t>(i));
        }
      }
      EXPECT_EQ(c->prepared_count(), cached + 1) << "round " << round;
    }
  }());
}

TEST(pg_connection, streams_100000_rows_without_keeping_them) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    std::int64_t sum = 0;
    std::uint64_t seen = 0;
    std::function<void(const pg::row&)> f = [&](const pg::row& r) {
      sum += r.get<int>(0).value();
      ++seen;
    };
    auto n = co_await c->for_each("SELECT id, name, tags FROM items ORDER BY id", pg::params{}, std::move(f));
    EXPECT_TRUE(n) << n.err().what();
    if (n) {
      EXPECT_EQ(*n, 100000u);
    }
    EXPECT_EQ(seen, 100000u);
    EXPECT_EQ(sum, 100000LL * 100001LL / 2);
    // Bounded memory: the receive buffer never grew much past one receive.
    EXPECT_LT(c->state()->rbuf.capacity(), 1024u * 1024u);
  }());
}

TEST(pg_connection, transaction_scope_rolls_back_unless_committed) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg_test::connect_or_fail();
    if (!c)
      co_return;
    auto mk = co_await c->execute("CREATE TEMP TABLE t (v int)");
    EXPECT_TRUE(mk) << mk.err().what();
    {
      auto tx = co_await pg::transaction::begin(*c);
      EXPECT_TRUE(tx) << tx.err().what();
      auto ins = co_await c->query("INSERT INTO t VALUES ($1)", 1);
      EXPECT_TRUE(ins);
      EXPECT_TRUE(c->in_transaction());
    }  // dropped: rolled back before the next call
    {
      auto tx = co_await pg::transaction::begin(*c);
      EXPECT_TRUE(tx) << tx.err().what();
      auto ins = co_await c->query("INSERT INTO t VALUES ($1)", 2);
      EXPECT_TRUE(ins);
      if (tx) {
        auto cm = co_await tx->commit();
        EXPECT_TRUE(cm) << cm.err().what();
      }
    }
    {
      // A failed statement aborts the transaction: COMMIT reports the rollback.
      auto tx = co_await pg::transaction::begin(*c);
      EXPECT_TRUE(tx) << tx.err().what();
      auto ins = co_await c->query("INSERT INTO t VALUES ($1)", 100);
      EXPECT_TRUE(ins);
      auto bad = co_await c->query("SELECT 1/0");
      EXPECT_FALSE(bad);
      if (tx) {
        auto cm = co_await tx->commit();
        EXPECT_FALSE(cm) << c->in_transaction();
        if (!cm) {
          EXPECT_EQ(cm.err().sqlstate, "40000") << cm.err().what();
        }
      }
    }
    auto r = co_await c->query("SELECT coalesce(sum(v), 0)::int FROM t");
    EXPECT_TRUE(r) << r.err().what();
    if (r) {
      EXPECT_EQ((*r)[0].get<int>(0).value(), 2);
    }
    EXPECT_FALSE(c->in_transaction());
  }());
}

TEST(pg_connection, listen_notify_reaches_a_waiting_task) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto& cl = pg_test::cluster::get();
    auto listener = co_await pg::connection::connect(cl.tcp("app"));
    auto talker = co_await pg::connection::connect(cl.tcp("app"));
    EXPECT_TRUE(listener && talker);
    if (!listener || !talker)
      co_return;
    auto l = co_await listener->execute("LISTEN jobs");
    EXPECT_TRUE(l);
    auto waiter = saturn::spawn(listener->next_notification());
    co_await saturn::sleep_for(50ms);
    auto n = co_await talker->query("SELECT pg_notify('jobs', $1)", "job-17");
    EXPECT_TRUE(n) << n.err().what();
    auto got = co_await std::move(waiter);
    EXPECT_TRUE(got) << got.err().what();
    if (got) {
      EXPECT_EQ(got->channel, "jobs");
      EXPECT_EQ(got->payload, "job-17");
      EXPECT_EQ(got->backend_pid, talker->backend_pid());
    }
  }());
}

}  // namespace
