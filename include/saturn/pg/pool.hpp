/// \file
/// `pg::pool`: a bounded set of connections shared by many tasks.
///
/// ```
/// saturn::pg::pool db(*saturn::pg::config::parse(url), {.max_size = 16});
/// auto r = co_await db.query("SELECT count(*) FROM items WHERE price < $1", 50);
/// auto c = co_await db.acquire();        // a connection of one's own (a transaction)
/// ```
///
/// Fair: a task that waits for a connection gets one before every task that started
/// waiting after it (FIFO hand-off). Self-healing: a connection that broke is dropped
/// when it comes back, and an idle one the server closed (a restart) is noticed and
/// replaced when it is next taken, so the pool recovers once the server is back.
/// Threading: every member may be called from any task on any worker at the same time.
/// The pool must outlive the connections it lent.
#pragma once

#include <saturn/pg/connection.hpp>
#include <saturn/sync/semaphore.hpp>

#include <cstddef>
#include <mutex>
#include <vector>

namespace saturn::pg {

/// Pool settings.
struct pool_options {
  /// At most this many connections; 0: the DATABASE_MAX_CONN environment variable, or 10.
  std::size_t max_size = 0;
};

class pool;

/// A connection lent by a pool; goes back on destruction (dropped if broken; rolled back
/// first if a transaction is open). Move-only. Threading: as connection's.
class pooled {
 public:
  pooled(pool* p, connection c) noexcept : m_pool(p), m_conn(std::move(c)) {}
  pooled(pooled&& o) noexcept : m_pool(std::exchange(o.m_pool, nullptr)), m_conn(std::move(o.m_conn)) {}
  pooled& operator=(pooled&&) = delete;
  ~pooled();
  connection* operator->() noexcept { return &m_conn; }
  connection& operator*() noexcept { return m_conn; }

 private:
  pool* m_pool;
  connection m_conn;
};

class pool {
 public:
  explicit pool(config cfg, pool_options opts = {});
  ~pool();
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// A connection: an idle one, or a new one while fewer than max_size exist, else the
  /// first one given back (waiting in FIFO order). Cancellable while waiting (errc::cancelled).
  /// Errors: the connect's error (the permit is given back).
  task<result<pooled>> acquire();

  /// acquire() + connection::query() + give back.
  template <class... P>
  task<result<rows>> query(std::string_view sql, const P&... ps) {
    params p;
    add_params(p, ps...);
    return query_params(sql, std::move(p));
  }
  task<result<rows>> query_params(std::string_view sql, params ps);

  std::size_t max_size() const noexcept { return m_max; }
  /// Connections open right now (idle + lent), a snapshot.
  std::size_t open_count() const noexcept;
  /// Idle connections right now, a snapshot.
  std::size_t idle_count() const noexcept;

 private:
  friend class pooled;
  void give_back(connection c) noexcept;
  config m_cfg;
  std::size_t m_max;
  semaphore m_permits;
  mutable std::mutex m_lock;
  std::vector<connection> m_idle;  // guarded by m_lock
  std::size_t m_open = 0;          // guarded by m_lock
};

}  // namespace saturn::pg
