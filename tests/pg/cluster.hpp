// A throwaway PostgreSQL cluster for the pg tests: initdb into a temporary directory (as
// `nobody` when the tests run as root, since initdb refuses root), a free 127.0.0.1 port,
// a private Unix socket directory, pg_hba with a trust, an md5 and a scram user, and the
// HttpArena `items` table (100,000 rows from items_seed_sql()). Started once per test
// binary; stopped and removed at exit, and by a watchdog process if the binary dies.
#pragma once

#include <saturn/pg/config.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace pg_test {

inline const char* pg_bin = "/usr/lib/postgresql/15/bin";

/// The HttpArena `items` table (its documented async-db schema; no index on price),
/// filled with n deterministic rows.
inline std::string items_seed_sql(int n) {
  std::string s =
      "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price INTEGER NOT NULL,"
      " quantity INTEGER NOT NULL, active BOOLEAN NOT NULL, tags JSONB NOT NULL, rating_score INTEGER NOT NULL,"
      " rating_count INTEGER NOT NULL);"
      " INSERT INTO items SELECT i, (ARRAY['Alpha','Beta','Gamma','Delta'])[1 + i % 4] || ' Widget ' || i,"
      " (ARRAY['electronics','tools','books','garden','toys'])[1 + i % 5], 1 + (i * 37) % 100, (i * 13) % 50,"
      " i % 3 <> 0, CASE WHEN i % 2 = 0 THEN '[\"fast\",\"new\"]'::jsonb ELSE '[\"sale\"]'::jsonb END,"
      " (i * 7) % 50, (i * 11) % 500 FROM generate_series(1, ";
  s.append(std::to_string(n)).append(") AS i; ANALYZE items;");
  return s;
}

class cluster {
 public:
  static cluster& get() {
    static cluster c;
    return c;
  }
  /// Empty if the cluster runs; otherwise why not (the test should skip or fail).
  const std::string& problem() const { return m_problem; }
  bool available() const { return m_problem.empty(); }
  std::uint16_t port() const { return m_port; }
  const std::string& socket_dir() const { return m_sock; }

  saturn::pg::config tcp(const std::string& user, const std::string& password = "") const {
    saturn::pg::config c;
    c.host = "127.0.0.1";
    c.port = m_port;
    c.user = user;
    c.password = password;
    c.dbname = "postgres";
    c.sslmode = saturn::pg::ssl_mode::disable;  // the TLS tests (tls_test.cpp) choose their own
    return c;
  }
  /// The CA that signed the server's certificate (for 127.0.0.1 and localhost), PEM.
  std::string ca_file() const { return m_dir + "/tls/ca.pem"; }
  saturn::pg::config unix_socket(const std::string& user) const {
    saturn::pg::config c = tcp(user);
    c.host = m_sock;
    return c;
  }
  /// Runs SQL through psql as the superuser; its output (tuples only), or "" on failure.
  std::string psql(const std::string& sql) const {
    const std::string file = m_dir + "/cmd.sql";
    {
      std::ofstream o(file);
      o << sql;
    }
    ::chmod(file.c_str(), 0644);
    return run(as_user() + std::string(pg_bin) + "/psql -X -q -t -A -v ON_ERROR_STOP=1 -h " + m_sock + " -p " +
               std::to_string(m_port) + " -U postgres -d postgres -f " + file);
  }
  /// Stops the server at once (SIGQUIT to every server process: connections drop).
  bool stop_immediate() const { return pg_ctl("stop -m immediate -w"); }
  bool start() const { return pg_ctl("start -w -t 60 -l " + m_dir + "/log"); }

  ~cluster() {
    if (!m_dir.empty()) {
      pg_ctl("stop -m immediate -w");
      std::filesystem::remove_all(m_dir);
    }
  }

 private:
  cluster() {
    if (::access((std::string(pg_bin) + "/initdb").c_str(), X_OK) != 0) {
      m_problem = "PostgreSQL binaries not found in /usr/lib/postgresql/15/bin (install postgresql)";
      return;
    }
    char tmpl[] = "/tmp/saturn-pg-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      m_problem = "mkdtemp failed";
      return;
    }
    m_dir = tmpl;
    m_sock = m_dir + "/sock";
    std::filesystem::create_directories(m_sock);
    if (::geteuid() == 0)
      run("chown -R nobody:nogroup " + m_dir);
    ::chmod(m_dir.c_str(), 0755);
    m_port = free_port();
    // A watchdog that removes the cluster if this process dies without running ~cluster.
    const std::string watchdog = "(while kill -0 " + std::to_string(::getpid()) + " 2>/dev/null; do sleep 1; done; " +
                                 as_user() + std::string(pg_bin) + "/pg_ctl -D " + m_dir + "/data stop -m immediate" +
                                 " >/dev/null 2>&1; rm -rf " + m_dir + ") </dev/null >/dev/null 2>&1 &";
    std::system(("setsid sh -c '" + watchdog + "'").c_str());
    if (run(as_user() + std::string(pg_bin) + "/initdb -D " + m_dir + "/data -U postgres -A trust -E UTF8" +
            " >" + m_dir + "/initdb.log 2>&1; echo $?") != "0") {
      m_problem = "initdb failed (see " + m_dir + "/initdb.log)";
      return;
    }
    {
      std::ofstream conf(m_dir + "/data/postgresql.conf", std::ios::app);
      conf << "listen_addresses = '127.0.0.1'\nport = " << m_port << "\nunix_socket_directories = '" << m_sock
           << "'\nmax_connections = 200\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n";
    }
    // TLS: a throwaway CA and a server certificate for 127.0.0.1 and localhost.
    {
      const std::string t = m_dir + "/tls";
      std::filesystem::create_directories(t);
      std::ofstream(t + "/san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
      const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
      const std::string q = " >>" + t + "/openssl.log 2>&1";
      if (run("cd " + t + " && openssl req -x509" + ec + " -keyout ca.key -out ca.pem -days 3 -subj /CN=saturn-pg-test-ca" +
              q + " && openssl req" + ec + " -keyout server.key -out server.csr -subj /CN=localhost" + q +
              " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3 -extfile san.ext"
              " -out server.pem" + q + " && chmod 600 server.key" +
              (::geteuid() == 0 ? " && chown nobody:nogroup server.key server.pem" : "") + "; echo $?") != "0") {
        m_problem = "making the test certificates failed (see " + t + "/openssl.log)";
        return;
      }
      std::ofstream conf(m_dir + "/data/postgresql.conf", std::ios::app);
      conf << "ssl = on\nssl_cert_file = '" << t << "/server.pem'\nssl_key_file = '" << t << "/server.key'\n";
    }
    {
      std::ofstream hba(m_dir + "/data/pg_hba.conf");
      hba << "local all all trust\n"
             "hostssl all tls_user 127.0.0.1/32 scram-sha-256\n"
             "hostnossl all tls_user 127.0.0.1/32 reject\n"
             "host all md5_user 127.0.0.1/32 md5\n"
             "host all scram_user 127.0.0.1/32 scram-sha-256\n"
             "host all all 127.0.0.1/32 trust\n";
    }
    if (!start()) {
      m_problem = "pg_ctl start failed (see " + m_dir + "/log)";
      return;
    }
    // CHECKPOINT last: the cluster runs with fsync and synchronous_commit off, so without
    // it an immediate stop (the fault tests) may lose the latest commits (the GRANT).
    const std::string setup =
        "SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'md5-secret';"
        " SET password_encryption = 'scram-sha-256'; CREATE ROLE scram_user LOGIN PASSWORD 'scram-secret';"
        " CREATE ROLE app LOGIN; CREATE ROLE tls_user LOGIN PASSWORD 'tls-secret'; " +
        items_seed_sql(100000) +
        " GRANT SELECT ON items TO md5_user, scram_user, app, tls_user; CHECKPOINT; SELECT count(*) FROM items;";
    if (psql(setup) != "100000")
      m_problem = "seeding the items table failed";
  }
  std::string as_user() const { return ::geteuid() == 0 ? "runuser -u nobody -- " : ""; }
  bool pg_ctl(const std::string& args) const {
    return run(as_user() + std::string(pg_bin) + "/pg_ctl -D " + m_dir + "/data " + args +
               " >>" + m_dir + "/pg_ctl.log 2>&1; echo $?") == "0";
  }
  static std::string run(const std::string& cmd) {
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
      ::pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    return out;
  }
  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }
  std::string m_dir;
  std::string m_sock;
  std::uint16_t m_port = 0;
  std::string m_problem;
};

/// In a test: skip when the binaries are absent, fail when the cluster would not start.
#define PG_REQUIRE_CLUSTER()                                                           \
  do {                                                                                 \
    auto& c_ = ::pg_test::cluster::get();                                              \
    if (::access("/usr/lib/postgresql/15/bin/initdb", X_OK) != 0)                      \
      GTEST_SKIP() << c_.problem();                                                    \
    ASSERT_TRUE(c_.available()) << c_.problem();                                       \
  } while (0)

}  // namespace pg_test
