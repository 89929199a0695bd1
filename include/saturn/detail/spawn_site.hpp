/// \file
/// `saturn::spawn_site`: where a task was spawned (spawn()'s defaulted last argument, shown
/// by the task dump and the stall detector). std::source_location where the compiler has
/// it; with clang 14 over libstdc++ 12, which lacks __builtin_source_location, an empty
/// stand-in of the same size (every site is then unknown: file "", line 0), so saturn's
/// headers still build there.
#pragma once

#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
namespace saturn {
using spawn_site = std::source_location;
}  // namespace saturn
#else
namespace saturn {
/// See the file comment. Threading: a plain value.
struct spawn_site {
  static constexpr spawn_site current() noexcept { return {}; }
  constexpr const char* file_name() const noexcept { return ""; }
  constexpr const char* function_name() const noexcept { return ""; }
  constexpr std::uint_least32_t line() const noexcept { return 0; }
  constexpr std::uint_least32_t column() const noexcept { return 0; }
  const void* m_impl = nullptr;  // one pointer, as std::source_location
};
}  // namespace saturn
#endif
