/// \file
/// `query_params`: the name/value pairs of a query string or of an
/// application/x-www-form-urlencoded body, read the way the WHATWG URL standard's
/// urlencoded parser reads them: split on '&' (not ';'), empty pieces skipped, a piece
/// without '=' is a name with an empty value, the name ends at the first '=', '+' is a
/// space, then %XX is decoded (an invalid escape is kept literally). Unlike WHATWG, the
/// result is bytes: invalid UTF-8 is not replaced with U+FFFD.
///
/// Nothing is parsed up front: each lookup walks the raw text, and decodes only what it
/// returns; a value with no '%' and no '+' comes back as a view of the raw text.
#pragma once

#include <saturn/http/decoded.hpp>
#include <saturn/http/param.hpp>
#include <saturn/result.hpp>

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saturn::http {

/// One pair as it appears in the raw text. Threading: a plain value; its views point into
/// the text the query_params was made over.
struct query_param {
  std::string_view raw_name;   ///< before the first '=', still encoded
  std::string_view raw_value;  ///< after it (empty if there was no '='), still encoded
  /// The decoded name.
  decoded name() const { return percent_decode(raw_name, decode_mode::form); }
  /// The decoded value.
  decoded value() const { return percent_decode(raw_value, decode_mode::form); }
};

/// A view over a raw query (the part of the target after '?', without it) or a form body.
/// It holds only the view: the text must outlive it (for `request::query()`, the request's
/// handler). Threading: a plain value; every member is read-only, does not suspend, and
/// may run on any thread.
class query_params {
 public:
  /// Iterates the pairs in order, empty pieces skipped. A forward iterator.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = query_param;
    using difference_type = std::ptrdiff_t;
    using pointer = const query_param*;
    using reference = const query_param&;

    iterator() noexcept = default;
    reference operator*() const noexcept { return m_cur; }
    pointer operator->() const noexcept { return &m_cur; }
    iterator& operator++() noexcept {
      advance();
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      advance();
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.m_done == b.m_done && (a.m_done || a.m_rest.data() == b.m_rest.data());
    }

   private:
    friend class query_params;
    explicit iterator(std::string_view raw) noexcept : m_rest(raw), m_done(false) { advance(); }
    void advance() noexcept {
      for (;;) {
        if (m_rest.data() == nullptr) {
          m_done = true;
          return;
        }
        std::size_t amp = m_rest.find('&');
        std::string_view piece = m_rest.substr(0, amp);
        // A null m_rest marks "no more pieces" (the last one had no '&' after it).
        m_rest = amp == std::string_view::npos ? std::string_view() : m_rest.substr(amp + 1);
        if (piece.empty())
          continue;
        std::size_t eq = piece.find('=');
        if (eq == std::string_view::npos)
          m_cur = {piece, piece.substr(piece.size())};
        else
          m_cur = {piece.substr(0, eq), piece.substr(eq + 1)};
        return;
      }
    }
    std::string_view m_rest;
    query_param m_cur;
    bool m_done = true;
  };

  query_params() noexcept = default;
  /// A view over `raw` (not copied).
  explicit query_params(std::string_view raw) noexcept : m_raw(raw) {}

  /// The raw text.
  std::string_view raw() const noexcept { return m_raw; }
  // The iterator reads a null data() as "no more pieces": an empty query is given "",
  // whose data() is not null. NOLINTNEXTLINE(bugprone-string-constructor): wanted.
  iterator begin() const noexcept { return iterator(m_raw.data() ? m_raw : std::string_view("", 0)); }
  iterator end() const noexcept { return iterator(); }
  /// True if there is no pair ("", "&&" and "?" with nothing after it have none).
  bool empty() const noexcept { return begin() == end(); }

  /// The raw pair of the first occurrence of `name` (compared decoded, without allocating),
  /// or null if there is none.
  std::optional<query_param> find(std::string_view name) const noexcept;
  /// True if some pair is named `name` (a flag such as "?verbose" counts).
  bool has(std::string_view name) const noexcept { return find(name).has_value(); }
  /// How many pairs are named `name`.
  std::size_t count(std::string_view name) const noexcept;
  /// The decoded value of the first pair named `name`, or nullopt if there is none.
  /// Allocates only if that value needs decoding.
  std::optional<decoded> get(std::string_view name) const {
    auto p = find(name);
    if (!p)
      return std::nullopt;
    return p->value();
  }
  /// The decoded values of every pair named `name`, in order ("a=1&a=2" gives {"1","2"}).
  /// Allocates the vector.
  std::vector<decoded> get_all(std::string_view name) const;
  /// The first value of `name` read as a T (see parse_param for the grammar and the
  /// errors; a missing name is std::errc::no_message_available). Allocates only if the
  /// value needs decoding.
  template <param_type T>
  result<T> get(std::string_view name) const {
    auto p = find(name);
    if (!p)
      return missing_param_error();
    decoded v = p->value();
    return parse_param<T>(v.view());
  }
  /// get<T>(name), or `fallback` when the name is missing or its value is not a T.
  template <param_type T>
  T get_or(std::string_view name, T fallback) const {
    result<T> r = get<T>(name);
    return r ? *r : fallback;
  }
  /// The first value of `name`, or a view of `fallback` (which must outlive the result)
  /// when it is missing.
  decoded get_or(std::string_view name, std::string_view fallback) const {
    auto p = find(name);
    return p ? p->value() : decoded(fallback);
  }
  /// A message for a get<T>(name) error: `query parameter "count": not an integer: "12x"`
  /// (the text quoted with non-printable bytes escaped, cut to 64 bytes). Allocates.
  std::string describe(std::string_view name, const error& e) const;

 private:
  std::string_view m_raw;
};

}  // namespace saturn::http
