// pg::config parsing: URLs, key=value strings, Unix socket directories, errors.
#include <saturn/pg/config.hpp>

#include <gtest/gtest.h>

using saturn::pg::config;
using saturn::pg::errc;
using saturn::pg::ssl_mode;

TEST(pg_config, parses_a_url) {
  auto c = config::parse("postgres://app:p%40ss@db.example:6543/shop?application_name=arena");
  ASSERT_TRUE(c) << c.err().what();
  EXPECT_EQ(c->user, "app");
  EXPECT_EQ(c->password, "p@ss");
  EXPECT_EQ(c->host, "db.example");
  EXPECT_EQ(c->port, 6543);
  EXPECT_EQ(c->dbname, "shop");
  EXPECT_EQ(c->application_name, "arena");
  EXPECT_FALSE(c->is_unix());
}

TEST(pg_config, url_defaults_and_v6_and_socket_dir) {
  auto a = config::parse("postgresql://u@[::1]/d");
  ASSERT_TRUE(a) << a.err().what();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 5432);
  auto b = config::parse("postgres://u@/d?host=%2Frun%2Fpostgresql&port=5433");
  ASSERT_TRUE(b) << b.err().what();
  EXPECT_TRUE(b->is_unix());
  EXPECT_EQ(b->socket_path(), "/run/postgresql/.s.PGSQL.5433");
}

TEST(pg_config, parses_key_value_strings) {
  auto c = config::parse("host=/tmp/s port=7000 user=bob dbname='my db' password='it\\'s'");
  ASSERT_TRUE(c) << c.err().what();
  EXPECT_EQ(c->host, "/tmp/s");
  EXPECT_EQ(c->port, 7000);
  EXPECT_EQ(c->user, "bob");
  EXPECT_EQ(c->dbname, "my db");
  EXPECT_EQ(c->password, "it's");
  EXPECT_TRUE(c->is_unix());
}

TEST(pg_config, rejects_bad_input) {
  for (const char* bad : {"port=0", "port=99999", "port=x", "user", "nosuchkey=1", "dbname='unterminated",
                          "postgres://u@h:badport/d", "postgres://u@h/d?sslmode=bogus", "postgres://u%zz@h/d"}) {
    auto c = config::parse(bad);
    EXPECT_FALSE(c) << "accepted " << bad;
    if (!c) {
      EXPECT_EQ(c.err().kind, errc::config) << bad;
    }
  }
}

TEST(pg_config, sslmode_and_sslrootcert) {
  auto d = config::parse("host=h user=u");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->sslmode, ssl_mode::prefer);  // libpq's default
  auto k = config::parse("host=h user=u sslmode=verify-full sslrootcert=/etc/ca.pem");
  ASSERT_TRUE(k) << k.err().what();
  EXPECT_EQ(k->sslmode, ssl_mode::verify_full);
  EXPECT_EQ(k->sslrootcert, "/etc/ca.pem");
  for (auto [text, mode] : {std::pair{"disable", ssl_mode::disable}, std::pair{"allow", ssl_mode::allow},
                            std::pair{"require", ssl_mode::require}, std::pair{"verify-ca", ssl_mode::verify_ca}}) {
    auto u = config::parse(std::string("postgres://u@h/d?sslmode=") + text);
    ASSERT_TRUE(u) << text;
    EXPECT_EQ(u->sslmode, mode) << text;
  }
  auto bad = config::parse("user=u sslmode=VERIFY-FULL");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.err().what().find("bad sslmode \"VERIFY-FULL\""), std::string::npos) << bad.err().what();
}
