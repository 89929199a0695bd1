/// \file
/// `result<T>`: the value of an operation or the error that stopped it, with the name of
/// the operation that failed ("read: Connection reset by peer"). saturn returns errors as
/// values (DESIGN.md); exceptions are for programming errors and for API edges that ask.
#pragma once

#include <cassert>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace saturn {

/// An error code plus the name of the operation that produced it.
struct error {
  std::error_code code;
  const char* operation = "";

  /// "operation: message", e.g. "connect: Connection refused".
  std::string message() const { return std::string(operation) + ": " + code.message(); }
  friend bool operator==(const error& e, std::errc c) noexcept { return e.code == std::make_error_condition(c); }
};

/// Builds an error from a negative errno as returned in a CQE.
inline error errno_error(int negative_errno, const char* operation) noexcept {
  return error{std::error_code(-negative_errno, std::system_category()), operation};
}

/// Either a T or an error. Threading: a plain value type.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : m_ok(true) { ::new (&m_value) T(std::move(value)); }
  result(error e) : m_ok(false) { ::new (&m_error) error(e); }
  result(const result& o) : m_ok(o.m_ok) {
    if (m_ok)
      ::new (&m_value) T(o.m_value);
    else
      ::new (&m_error) error(o.m_error);
  }
  result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : m_ok(o.m_ok) {
    if (m_ok)
      ::new (&m_value) T(std::move(o.m_value));
    else
      ::new (&m_error) error(o.m_error);
  }
  result& operator=(result o) {
    this->~result();
    ::new (this) result(std::move(o));
    return *this;
  }
  ~result() {
    if (m_ok)
      m_value.~T();
  }

  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  /// The value; throws std::system_error (with the operation's name) if this is an error.
  T& value() & {
    throw_if_error();
    return m_value;
  }
  T&& value() && {
    throw_if_error();
    return std::move(m_value);
  }
  const T& value() const& {
    throw_if_error();
    return m_value;
  }
  T& operator*() noexcept { return m_value; }
  const T& operator*() const noexcept { return m_value; }
  T* operator->() noexcept { return &m_value; }
  /// The error; only valid when !has_value().
  const error& err() const noexcept { return m_error; }
  /// The error code (empty when this holds a value).
  std::error_code code() const noexcept { return m_ok ? std::error_code{} : m_error.code; }

 private:
  void throw_if_error() const {
    if (!m_ok)
      throw std::system_error(m_error.code, m_error.operation);
  }
  union {
    T m_value;
    error m_error;
  };
  bool m_ok;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error e) : m_error(e), m_ok(false) {}
  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  void value() const {
    if (!m_ok)
      throw std::system_error(m_error.code, m_error.operation);
  }
  const error& err() const noexcept { return m_error; }
  std::error_code code() const noexcept { return m_ok ? std::error_code{} : m_error.code; }

 private:
  error m_error{};
  bool m_ok = true;
};

}  // namespace saturn
