/// \file
/// `fs_error` and `fs_result<T>`: the file-system flavour of saturn::error / result<T>.
/// A file-system error names the operation AND the path it was about
/// ("open /etc/shadow: Permission denied"), because "open: Permission denied" does not
/// tell the user what to fix. fs_error converts to saturn::error (dropping the path), so
/// code that handles generic errors keeps working.
#pragma once

#include <saturn/result.hpp>

#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace saturn::fs {

/// An error code, the operation that failed, and the path it was applied to.
/// Threading: a plain value type.
struct fs_error {
  std::error_code code;
  const char* operation = "";
  std::string path;

  /// "operation path: message", e.g. "open /x/y: No such file or directory".
  std::string message() const { return std::string(operation) + " " + path + ": " + code.message(); }
  /// The generic error (operation and code; the path is dropped).
  operator error() const noexcept { return error{code, operation}; }  // NOLINT: implicit on purpose
  friend bool operator==(const fs_error& e, std::errc c) noexcept { return e.code == std::make_error_condition(c); }
};

/// Builds an fs_error from a negative errno as returned in a CQE or by a raw syscall.
inline fs_error fs_errno_error(int negative_errno, const char* operation, std::string path) {
  return fs_error{std::error_code(-negative_errno, std::system_category()), operation, std::move(path)};
}

/// Adds the path to a generic error.
inline fs_error with_path(const error& e, std::string path) { return fs_error{e.code, e.operation, std::move(path)}; }

/// Either a T or an fs_error. Same surface as result<T>. Threading: a plain value type.
template <class T>
class [[nodiscard]] fs_result {
 public:
  fs_result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit like result<T>
  fs_result(fs_error e) : m_v(std::in_place_index<1>, std::move(e)) {}   // NOLINT

  bool has_value() const noexcept { return m_v.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  /// The value; throws std::system_error whose what() is message() if this is an error.
  T& value() & {
    throw_if_error();
    return std::get<0>(m_v);
  }
  T&& value() && {
    throw_if_error();
    return std::get<0>(std::move(m_v));
  }
  const T& value() const& {
    throw_if_error();
    return std::get<0>(m_v);
  }
  T& operator*() noexcept { return *std::get_if<0>(&m_v); }
  const T& operator*() const noexcept { return *std::get_if<0>(&m_v); }
  T* operator->() noexcept { return std::get_if<0>(&m_v); }
  const T* operator->() const noexcept { return std::get_if<0>(&m_v); }
  /// The error; only valid when !has_value().
  const fs_error& err() const noexcept { return *std::get_if<1>(&m_v); }
  /// The error code (empty when this holds a value).
  std::error_code code() const noexcept { return has_value() ? std::error_code{} : err().code; }

 private:
  void throw_if_error() const {
    if (!has_value())
      throw std::system_error(err().code, std::string(err().operation) + " " + err().path);
  }
  std::variant<T, fs_error> m_v;
};

/// fs_result<void>: success or an fs_error.
template <>
class [[nodiscard]] fs_result<void> {
 public:
  fs_result() = default;
  fs_result(fs_error e) : m_error(std::move(e)) {}  // NOLINT: implicit like result<void>
  bool has_value() const noexcept { return !m_error.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (m_error)
      throw std::system_error(m_error->code, std::string(m_error->operation) + " " + m_error->path);
  }
  const fs_error& err() const noexcept { return *m_error; }
  std::error_code code() const noexcept { return m_error ? m_error->code : std::error_code{}; }

 private:
  std::optional<fs_error> m_error;
};

}  // namespace saturn::fs
