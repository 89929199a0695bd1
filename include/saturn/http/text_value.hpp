/// \file
/// `text_value`: a short string a response carries (a Content-Type, a header value) that
/// is either a string literal, viewed with no copy, or owned. It never views memory that
/// might go away before the response is sent.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace saturn::http {

/// A string literal (viewed: literals live for the whole program) or an owned copy of
/// anything else. Threading: a plain value.
///
///     text_value a = "application/json";          // a literal: no copy
///     text_value b = std::string(ct);              // owned
///     text_value c = std::string_view(ct);         // copied, owned
class text_value {
 public:
  text_value() noexcept = default;
  /// A string literal: viewed, not copied. (A `const char` array that is not a literal
  /// must outlive every response holding it; pass a std::string_view to copy instead.)
  template <std::size_t N>
  text_value(const char (&literal)[N]) noexcept  // NOLINT(google-explicit-constructor)
      : m_literal(literal, N - 1) {}
  /// A writable char array is a buffer, not a literal: say std::string_view(buf) to copy it.
  template <std::size_t N>
  text_value(char (&)[N]) = delete;
  /// Owns `s` (moved in, or copied from an lvalue).
  template <class S>
    requires std::same_as<std::remove_cvref_t<S>, std::string>
  text_value(S&& s) : m_owned(std::forward<S>(s)), m_is_owned(true) {}  // NOLINT
  /// Owns a copy of `s` (any other string: a view, a `const char*`).
  text_value(std::string_view s) : m_owned(s), m_is_owned(true) {}  // NOLINT

  /// The bytes.
  std::string_view view() const noexcept { return m_is_owned ? std::string_view(m_owned) : m_literal; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)
  bool empty() const noexcept { return view().empty(); }
  std::size_t size() const noexcept { return view().size(); }
  friend bool operator==(const text_value& a, std::string_view b) noexcept { return a.view() == b; }

 private:
  std::string m_owned;
  std::string_view m_literal;
  bool m_is_owned = false;
};

}  // namespace saturn::http
