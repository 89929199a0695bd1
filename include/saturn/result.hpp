/// \file
/// `result<T>`: the value of an operation or the error that stopped it, with the name of
/// the operation that failed ("read: Connection reset by peer"). saturn returns errors as
/// values (docs/contributing.md, "Errors"); exceptions are for programming errors and for
/// API edges that ask.
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

/// result<void>: success or an error. 24 bytes: success is an error slot whose operation
/// is null (an error always names one), so no flag is kept; a result<void> held across a
/// co_await lives in the coroutine frame (docs/decisions/task-frame-size.md).
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error e) : m_error(e) {
    if (m_error.operation == nullptr)
      m_error.operation = "";
  }
  bool has_value() const noexcept { return m_error.operation == nullptr; }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (!has_value())
      throw std::system_error(m_error.code, m_error.operation);
  }
  /// The error; only meaningful when !has_value() (a success gives an empty error).
  const error& err() const noexcept {
    static const error none{};
    return has_value() ? none : m_error;
  }
  std::error_code code() const noexcept { return has_value() ? std::error_code{} : m_error.code; }

 private:
  error m_error{std::error_code{}, nullptr};
};

}  // namespace saturn
