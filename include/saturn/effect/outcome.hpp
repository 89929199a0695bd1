/// \file
/// What an effect ends with: `outcome<T>` holds its value or a `failure` — an operation's
/// error (saturn::error: an error_code plus the operation's name) or an exception thrown by
/// user code in the pipeline. Cancellation is the error std::errc::operation_canceled, as
/// in tier B, so a stopped effect is visible to upon_error and is never silently dropped.
#pragma once

#include <saturn/result.hpp>

#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace saturn::effect {

/// Why an effect did not produce a value. Threading: a plain value type.
class failure {
 public:
  /// An operation's error (from a CQE, a timeout, a cancellation …).
  failure(error e) noexcept : m_error(e) {}  // NOLINT(google-explicit-constructor)
  /// An exception thrown by a function of the pipeline (then, let_value, upon_error …).
  failure(std::exception_ptr p) noexcept  // NOLINT(google-explicit-constructor)
      : m_error{std::make_error_code(std::errc::interrupted), "exception"}, m_exception(std::move(p)) {}

  /// operation_canceled: the effect was stopped through its stop token.
  static failure canceled(const char* operation) noexcept {
    return error{std::make_error_code(std::errc::operation_canceled), operation};
  }

  /// True when this failure carries an exception rather than an error code.
  bool is_exception() const noexcept { return static_cast<bool>(m_exception); }
  /// True when the effect was cancelled (std::errc::operation_canceled).
  bool is_canceled() const noexcept {
    return !is_exception() && m_error.code == std::make_error_condition(std::errc::operation_canceled);
  }
  /// The error (for an exception: errc::interrupted named "exception"; see exception()).
  const error& err() const noexcept { return m_error; }
  /// The error code (empty meaning is never used: a failure always has a code).
  std::error_code code() const noexcept { return m_error.code; }
  /// The exception, or null.
  const std::exception_ptr& exception() const noexcept { return m_exception; }
  /// "operation: message", or "exception: what()" for an std::exception.
  std::string message() const {
    if (!m_exception)
      return m_error.message();
    try {
      std::rethrow_exception(m_exception);
    } catch (const std::exception& e) {
      return std::string("exception: ") + e.what();
    } catch (...) {
      return "exception: (not an std::exception)";
    }
  }
  /// Rethrows the exception, or throws std::system_error naming the operation.
  [[noreturn]] void rethrow() const {
    if (m_exception)
      std::rethrow_exception(m_exception);
    throw std::system_error(m_error.code, m_error.operation);
  }

 private:
  error m_error;
  std::exception_ptr m_exception;
};

/// A value of type T or a failure. T must be an object type (references: use
/// std::reference_wrapper). Threading: a plain value type.
///
/// Layout: the value shares its storage with the error code; the exception pointer is
/// kept beside them (null for values: a store and a null test the optimizer folds), so no
/// path ever reads a member that was not constructed.
template <class T>
class [[nodiscard]] outcome {
  static_assert(!std::is_reference_v<T>, "effect values must be object types (wrap references in std::ref)");

 public:
  outcome(T v) : m_ok(true) { ::new (static_cast<void*>(&m_value)) T(std::move(v)); }  // NOLINT
  outcome(failure f) noexcept : m_exception(f.exception()), m_ok(false) {  // NOLINT
    ::new (static_cast<void*>(&m_error)) saturn::error(f.err());
  }
  outcome(const outcome& o) : m_exception(o.m_exception), m_ok(o.m_ok) {
    if (m_ok)
      ::new (static_cast<void*>(&m_value)) T(o.m_value);
    else
      ::new (static_cast<void*>(&m_error)) saturn::error(o.m_error);
  }
  outcome(outcome&& o) noexcept(std::is_nothrow_move_constructible_v<T>)
      : m_exception(std::move(o.m_exception)), m_ok(o.m_ok) {
    if (m_ok)
      ::new (static_cast<void*>(&m_value)) T(std::move(o.m_value));
    else
      ::new (static_cast<void*>(&m_error)) saturn::error(o.m_error);
  }
  outcome& operator=(outcome o) {
    this->~outcome();
    ::new (static_cast<void*>(this)) outcome(std::move(o));
    return *this;
  }
  ~outcome() {
    if (m_ok)
      m_value.~T();
  }

  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  /// The value; rethrows the failure (see failure::rethrow) if there is none.
  T& value() & {
    if (!m_ok)
      error().rethrow();
    return m_value;
  }
  T&& value() && {
    if (!m_ok)
      error().rethrow();
    return std::move(m_value);
  }
  T& operator*() noexcept { return m_value; }
  const T& operator*() const noexcept { return m_value; }
  T* operator->() noexcept { return &m_value; }
  /// The failure (a copy); only valid when !has_value().
  failure error() const noexcept {
    if (m_exception)
      return failure(m_exception);
    return failure(m_error);
  }

 private:
  union {
    T m_value;
    saturn::error m_error;
  };
  std::exception_ptr m_exception;
  bool m_ok;
};

/// outcome<void>: success or a failure.
template <>
class [[nodiscard]] outcome<void> {
 public:
  outcome() noexcept = default;
  outcome(failure f) noexcept : m_failure(std::move(f)), m_ok(false) {}  // NOLINT
  bool has_value() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  void value() const {
    if (!m_ok)
      m_failure.rethrow();
  }
  /// The failure (a copy); only valid when !has_value().
  failure error() const noexcept { return m_failure; }

 private:
  failure m_failure{saturn::error{}};
  bool m_ok = true;
};

}  // namespace saturn::effect
