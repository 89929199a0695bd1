/// \file
/// `route_params`: the values of a matched route's `{name}` segments, percent-decoded when
/// read, and typed reads of them (the errors of param.hpp).
#pragma once

#include <saturn/http/decoded.hpp>
#include <saturn/http/param.hpp>
#include <saturn/result.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace saturn::http {

/// The values of a matched route's `{name}` segments. Threading: a plain value, valid as
/// long as the path it was matched on (the request's, for a handler); every member is
/// read-only, does not suspend, and may run on any thread.
class route_params {
 public:
  static constexpr std::size_t max_params = 8;
  /// The percent-decoded value of parameter `name` ("/user/a%20b" gives "a b", and "%2F"
  /// gives "/"; '+' stays '+'), or an empty value if the route has no such parameter.
  /// Allocates only if the value has a '%'.
  decoded get(std::string_view name) const { return percent_decode(raw(name), decode_mode::path); }
  /// The value of parameter `name` as matched, still encoded (a view into the path), or
  /// an empty view.
  std::string_view raw(std::string_view name) const noexcept {
    const slot* s = find(name);
    return s ? std::string_view(s->value, s->value_len) : std::string_view();
  }
  /// True if the route has a parameter `name`.
  bool has(std::string_view name) const noexcept { return find(name) != nullptr; }
  /// The decoded value of `name` read as a T: the grammar and errors of parse_param, and
  /// std::errc::no_message_available for a name the route does not have.
  template <param_type T>
  result<T> get(std::string_view name) const {
    const slot* s = find(name);
    if (!s)
      return missing_param_error();
    decoded v = percent_decode(std::string_view(s->value, s->value_len), decode_mode::path);
    return parse_param<T>(v.view());
  }
  /// A message for a get<T>(name) error: `route parameter "id": not an integer: "7x"`.
  /// Allocates.
  std::string describe(std::string_view name, const error& e) const {
    const slot* s = find(name);
    if (!s)
      return detail::describe_param("route", name, nullptr, e);
    decoded v = percent_decode(std::string_view(s->value, s->value_len), decode_mode::path);
    std::string_view text = v.view();
    return detail::describe_param("route", name, &text, e);
  }
  /// How many parameters the matched route has.
  std::size_t size() const noexcept { return m_count; }

 private:
  friend class router;
  // Plain slots with no initializer: a match costs nothing for the slots it does not
  // fill (m_count says which are valid).
  struct slot {
    const char* name;
    std::size_t name_len;
    const char* value;
    std::size_t value_len;
  };
  const slot* find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < m_count; ++i)
      if (std::string_view(m_slots[i].name, m_slots[i].name_len) == name)
        return &m_slots[i];
    return nullptr;
  }
  slot m_slots[max_params];
  std::size_t m_count = 0;
};

}  // namespace saturn::http
