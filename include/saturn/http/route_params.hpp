/// \file
/// `route_params`: the values of a matched route's `{name}` segments.
#pragma once

#include <cstddef>
#include <string_view>

namespace saturn::http {

/// The values of a matched route's `{name}` segments (views into the request's path).
/// Threading: a plain value owned by the connection serving the request; valid while the
/// request's handler runs.
class route_params {
 public:
  static constexpr std::size_t max_params = 8;
  /// The value of parameter `name`, or an empty view.
  std::string_view get(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < m_count; ++i)
      if (std::string_view(m_slots[i].name, m_slots[i].name_len) == name)
        return {m_slots[i].value, m_slots[i].value_len};
    return {};
  }
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
  slot m_slots[max_params];
  std::size_t m_count = 0;
};

}  // namespace saturn::http
