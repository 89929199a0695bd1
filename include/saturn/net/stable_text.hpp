/// \file
/// `net::stable_text`: a process-lifetime C string for an error's operation. saturn::error
/// keeps its operation as a `const char*`, and a DNS or connect failure should name the
/// host and the addresses it was about, so those texts are kept in a set that is never
/// freed. For modules above net (http's client, os's signals) that build such texts too.
#pragma once

#include <cstddef>
#include <string>

namespace saturn::net {

/// A C string equal to `text` that stays valid for the life of the process (the same
/// pointer for equal texts). At most stable_text_limit distinct texts are kept, so a
/// process that fails on many distinct names holds bounded memory: past the limit (or if
/// allocation fails) `fallback`, which must itself be a string literal, is returned.
/// Threading: any thread (a mutex guards the set; meant for error paths only). Does not
/// suspend.
const char* stable_text(std::string text, const char* fallback) noexcept;

/// Most distinct texts stable_text keeps.
inline constexpr std::size_t stable_text_limit = 4096;

}  // namespace saturn::net
