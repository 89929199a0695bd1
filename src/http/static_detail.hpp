// The pieces of static_files that are pure functions (path checks, validators, ranges)
// and its in-memory cache; tested directly in tests/http/static_files_test.cpp.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace saturn::http::detail {

/// For tests: while true, a static_files handler that opens its root then behaves as on a
/// kernel without openat2 (openat, then the /proc/self/fd real-path check).
inline saturn::detail::atomic<bool> pretend_no_openat2{false};

/// Why a request path was refused before any lookup.
enum class path_verdict { ok, bad_escape, not_found };

/// Percent-decodes `raw` (the catch-all value) once into `out` and checks it: a bad
/// escape (`%` without two hex digits) is bad_escape; a NUL, a `..` or `.` segment (after
/// decoding, so `%2e%2e` and `.%2E` too; `.` is harmless but refused so that one file has
/// one name), or a segment starting with '.' unless `hidden`, is not_found. '\' is a
/// plain byte. Leading and repeated '/' are dropped; a trailing '/' is kept (a
/// directory). `out` is relative to the root ("" for the root itself).
path_verdict decode_static_path(std::string_view raw, bool hidden, std::string& out);

/// `"<hex size>-<hex mtime ns>"` (with the quotes).
std::string make_etag(std::uint64_t size, std::int64_t mtime_ns);

/// IMF-fixdate of a Unix time ("Sun, 06 Nov 1994 08:49:37 GMT").
std::string imf_fixdate(std::int64_t unix_seconds);
/// The Unix time of an HTTP-date in IMF-fixdate form, nullopt if it is not one (the
/// obsolete RFC 850 / asctime forms are not accepted: the condition is then ignored).
std::optional<std::int64_t> parse_imf_fixdate(std::string_view s) noexcept;

/// If-None-Match (`value`: the whole field, or several joined by ",") against `etag`:
/// true if it is `*` or lists an entity-tag weakly equal to `etag` (W/ ignored on both).
bool none_match_hits(std::string_view value, std::string_view etag) noexcept;

/// One byte range, inclusive.
struct byte_range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};
/// What a Range field asks of a representation of `size` bytes.
struct range_request {
  enum kind_t { none, single, unsatisfiable } kind = none;  ///< none: ignore, send all
  byte_range range{};
};
/// Parses `Range` for a file of `size` bytes: `bytes=a-b`, `a-`, `-n` (one range) give
/// `single` (clamped to the file) or `unsatisfiable`; no field, another unit, a syntax
/// error, or several ranges give `none` (RFC 9110 §14.2 lets a server ignore Range).
range_request parse_range(std::string_view value, std::uint64_t size) noexcept;

/// The in-memory copies of small files: path (relative to the root, the variant's own
/// name for a precompressed sibling) → bytes, valid for the size and mtime they were read
/// with. Threading: any thread (one mutex); no call suspends.
class static_cache {
 public:
  using clock = std::chrono::steady_clock;
  struct entry {
    std::string name;  ///< the file's path under the root (a directory's index file)
    std::shared_ptr<const std::string> bytes;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    clock::time_point checked;  ///< when size/mtime were last confirmed by statx
  };
  explicit static_cache(std::size_t budget) : m_budget(budget) {}
  /// The entry for `path`, if any.
  std::optional<entry> find(const std::string& path) const;
  /// Records that `path` still has `size` / `mtime_ns` as of `now`; drops it if not.
  void confirm(const std::string& path, std::uint64_t size, std::int64_t mtime_ns, clock::time_point now);
  /// Forgets `path` (its file is gone or unreadable).
  void erase(const std::string& path);
  /// Stores `bytes` of the file `name` for `path` if they fit in what is left of the budget.
  void put(const std::string& path, std::string name, std::shared_ptr<const std::string> bytes,
           std::int64_t mtime_ns, clock::time_point now);

 private:
  mutable std::mutex m_mu;
  std::unordered_map<std::string, entry> m_entries;
  std::size_t m_used = 0;
  std::size_t m_budget;
};

}  // namespace saturn::http::detail
