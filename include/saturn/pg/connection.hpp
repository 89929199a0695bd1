/// \file
/// `pg::connection`: one PostgreSQL session over a saturn stream (TCP or a Unix socket),
/// speaking the v3 wire protocol itself (docs/decisions/pg.md says why not libpq).
///
/// ```
/// auto conn = co_await saturn::pg::connection::connect("postgres://app:pw@127.0.0.1/app");
/// if (!conn) co_return;
/// auto r = co_await conn->query("SELECT id, name FROM items WHERE id = $1", std::int32_t{7});
/// if (!r) std::puts(r.err().what().c_str());   // SQLSTATE, message, detail
/// ```
///
/// Queries use the extended protocol: a statement is parsed and described once per
/// connection (cached by its text and parameter types) and then only bound and executed.
/// `pipeline()` sends many queries before reading any answer.
///
/// Threading: one task uses a connection at a time (a second concurrent call returns
/// errc::misuse); the task may move between workers. Every call suspends.
/// Cancellation: when the task's stop token fires while a query runs (a cancelled task or
/// with_timeout's deadline), the client sends a CancelRequest to the server on a separate
/// connection, waits for the server to finish the statement, and returns errc::cancelled;
/// the connection is then usable again. Errors are values (pg::result).
#pragma once

#include <saturn/pg/config.hpp>
#include <saturn/pg/rows.hpp>
#include <saturn/task/task.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace saturn::pg {

/// A query for pipeline(): its text and parameters.
struct statement {
  std::string sql;
  params args;
};

/// A NOTIFY delivered to a connection that LISTENs.
struct notification {
  std::int32_t backend_pid = 0;
  std::string channel;
  std::string payload;
};

namespace detail {
struct connection_state;
}

/// A PostgreSQL session. Move-only; the destructor closes the socket (without a Terminate
/// message; call close() for a polite goodbye).
class connection {
 public:
  connection() noexcept;
  explicit connection(std::unique_ptr<detail::connection_state> s) noexcept;
  connection(connection&&) noexcept;
  connection& operator=(connection&&) noexcept;
  ~connection();

  /// Connects and authenticates (trust, password, md5, scram-sha-256). Errors: errc::config,
  /// errc::connection (socket), errc::auth (wrong password: the server's 28P01),
  /// errc::server. Bounded by cfg.connect_timeout.
  static task<result<connection>> connect(config cfg);
  /// connect(config::parse(conninfo)).
  static task<result<connection>> connect(std::string_view conninfo);

  /// Runs `sql` with parameters `$1..$n` = `ps...` (types.hpp) and returns every row.
  /// Lifetime: `sql` must stay alive until the task ends.
  template <class... P>
  task<result<rows>> query(std::string_view sql, const P&... ps) {
    params p;
    add_params(p, ps...);
    return query_params(sql, std::move(p));
  }
  /// query() with already encoded parameters.
  task<result<rows>> query_params(std::string_view sql, params ps);
  /// Runs `sql` with `ps`, calling `on_row` for each row as it arrives, without keeping
  /// rows (memory stays bounded by the receive buffer); returns the number of rows.
  /// `on_row` runs on the task's thread and must not keep the row past its return.
  task<result<std::uint64_t>> for_each(std::string_view sql, params ps, std::function<void(const row&)> on_row);
  /// Runs one or more ';'-separated statements without parameters (simple protocol).
  task<result<void>> execute(std::string_view sql);
  /// Sends every query before reading any answer, in windows of about 64 KiB of requests,
  /// and returns one result per query in order. A failing query does not stop the others
  /// (each runs in its own implicit transaction unless a BEGIN is open). The outer error
  /// is a connection failure or a cancellation.
  task<result<std::vector<result<rows>>>> pipeline(std::vector<statement> queries);
  /// The next NOTIFY for a channel this connection LISTENs on. Suspends until one arrives
  /// (those received during queries are queued). Cancellable (errc::cancelled; the
  /// connection stays usable).
  task<result<notification>> next_notification();
  /// Sends Terminate and closes. The connection is empty afterwards.
  task<void> close();

  /// True once the connection failed and can no longer be used.
  bool is_broken() const noexcept;
  /// True while a transaction block is open on the server (ReadyForQuery status T or E).
  bool in_transaction() const noexcept;
  /// The server process id (pg_stat_activity.pid, pg_cancel_backend's argument).
  std::int32_t backend_pid() const noexcept;
  /// A server parameter reported by ParameterStatus ("server_version", ...), or "".
  std::string parameter(std::string_view name) const;
  /// Statements prepared on this connection so far (cache size).
  std::size_t prepared_count() const noexcept;
  /// True if the server closed the socket or sent something unprompted while idle
  /// (a non-blocking peek; never suspends). Used by the pool to drop stale connections.
  bool is_stale() const noexcept;
  /// Asks that the next call first send ROLLBACK (a transaction scope ended uncommitted).
  void schedule_rollback() noexcept;
  /// True if a rollback is scheduled or a transaction is open.
  bool needs_reset() const noexcept;
  /// Sends the scheduled ROLLBACK now, if any.
  task<result<void>> reset();

  detail::connection_state* state() const noexcept { return m_s.get(); }

 private:
  std::unique_ptr<detail::connection_state> m_s;
};

/// A transaction scope: BEGIN on creation, ROLLBACK unless commit() succeeded. The
/// rollback of a scope dropped uncommitted is sent before the connection's next call (or
/// when the pool takes the connection back), since a destructor cannot suspend.
/// Threading: as the connection's; the connection must outlive the scope.
class transaction {
 public:
  /// Sends BEGIN (or `begin_sql`, e.g. "BEGIN ISOLATION LEVEL SERIALIZABLE").
  static task<result<transaction>> begin(connection& c, std::string_view begin_sql = "BEGIN");
  transaction(transaction&& o) noexcept : m_c(std::exchange(o.m_c, nullptr)) {}
  transaction& operator=(transaction&&) = delete;
  ~transaction() {
    if (m_c != nullptr)
      m_c->schedule_rollback();
  }
  /// COMMIT; the scope is finished whatever the outcome. A transaction in which a
  /// statement failed is rolled back by the server: then this returns errc::server with
  /// SQLSTATE 40000.
  task<result<void>> commit();
  /// ROLLBACK now.
  task<result<void>> rollback();
  connection& conn() const noexcept { return *m_c; }

 private:
  explicit transaction(connection* c) noexcept : m_c(c) {}
  connection* m_c;
};

/// Runs `t` with a deadline: on expiry the query is cancelled on the server (as for any
/// stop of the task) and the outcome is errc::cancelled. Threading: await from a task.
task<result<rows>> with_deadline(std::chrono::nanoseconds d, task<result<rows>> t);

}  // namespace saturn::pg
