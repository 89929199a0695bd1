/// \file
/// How PostgreSQL failures come back: `pg::result<T>` holds a value or a `pg::error`, which
/// says what kind of failure it was (`pg::errc`) and, for an error the server reported, its
/// SQLSTATE, message, detail and hint as the server sent them.
///
/// ```
/// auto r = co_await conn.query("SELECT * FROM nope");
/// if (!r && r.err().sqlstate == "42P01") { /* undefined_table */ }
/// ```
///
/// Threading: plain value types.
#pragma once

#include <saturn/result.hpp>

#include <cassert>
#include <new>
#include <string>
#include <system_error>
#include <utility>

namespace saturn::pg {

/// What kind of failure a pg::error is.
enum class errc {
  /// The server answered with an ErrorResponse (see error::sqlstate).
  server = 1,
  /// The connection broke (closed by the server, reset, or a send/receive failed); the
  /// connection is unusable afterwards. error::io holds the socket error.
  connection,
  /// The server sent something this client does not understand (connection dropped).
  protocol,
  /// Authentication failed or asked for a method this client does not support.
  auth,
  /// A connection string or URL could not be parsed.
  config,
  /// A value could not be converted to or from the requested C++ type.
  type,
  /// A NULL was read into a type that is not std::optional.
  null,
  /// The query was cancelled (task stop or deadline); the connection stays usable.
  cancelled,
  /// The connection is busy or was closed by the caller (a programming error as a value).
  misuse,
};

/// The std::error_category of pg::errc.
const std::error_category& pg_category() noexcept;
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), pg_category()}; }

/// A failed PostgreSQL operation.
struct error {
  errc kind = errc::server;
  /// Five characters ("23505") for a server error, empty otherwise. A cancelled query
  /// carries the server's "57014" when the server reported the cancel.
  std::string sqlstate;
  /// The server's primary message, or this client's description of what failed.
  std::string message;
  /// The server's DETAIL and HINT fields (empty when absent).
  std::string detail;
  std::string hint;
  /// For errc::connection: the socket error that broke it.
  saturn::error io{};

  std::error_code code() const noexcept { return make_error_code(kind); }
  /// "ERROR 23505: duplicate key ... (DETAIL: Key (id)=(1) already exists.)"
  std::string what() const;
};

/// A T or the pg::error that stopped it. Threading: a plain value type.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : m_ok(true) { ::new (&m_value) T(std::move(value)); }
  result(error e) : m_ok(false) { ::new (&m_error) error(std::move(e)); }
  result(const result& o) : m_ok(o.m_ok) {
    if (m_ok)
      ::new (&m_value) T(o.m_value);
    else
      ::new (&m_error) error(o.m_error);
  }
  result(result&& o) noexcept : m_ok(o.m_ok) {
    if (m_ok)
      ::new (&m_value) T(std::move(o.m_value));
    else
      ::new (&m_error) error(std::move(o.m_error));
  }
  result& operator=(result o) {
    this->~result();
    ::new (this) result(std::move(o));
    return *this;
  }
  ~result() {
    if (m_ok)
      m_value.~T();
    else
      m_error.~error();
  }
  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  /// The value; throws std::runtime_error with error::what() if this is an error.
  T& value() & {
    check();
    return m_value;
  }
  T&& value() && {
    check();
    return std::move(m_value);
  }
  T& operator*() noexcept { return m_value; }
  const T& operator*() const noexcept { return m_value; }
  T* operator->() noexcept { return &m_value; }
  const T* operator->() const noexcept { return &m_value; }
  /// The error; only valid when !has_value().
  const error& err() const noexcept { return m_error; }

 private:
  void check() const;
  union {
    T m_value;
    error m_error;
  };
  bool m_ok;
};

/// Success or a pg::error.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error e) : m_ok(false), m_error(std::move(e)) {}
  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  void value() const;
  const error& err() const noexcept { return m_error; }

 private:
  bool m_ok = true;
  error m_error{};
};

namespace detail {
[[noreturn]] void throw_error(const error& e);
}  // namespace detail

template <class T>
void result<T>::check() const {
  if (!m_ok)
    detail::throw_error(m_error);
}
inline void result<void>::value() const {
  if (!m_ok)
    detail::throw_error(m_error);
}

}  // namespace saturn::pg

template <>
struct std::is_error_code_enum<saturn::pg::errc> : std::true_type {};
