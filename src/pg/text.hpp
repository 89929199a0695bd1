// cat(a, b, ...): one string from pieces, built with append (g++ 12 at -O3 warns falsely
// about std::string's operator+).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace saturn::pg::detail {
inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts)
    out.append(p);
  return out;
}
}  // namespace saturn::pg::detail
