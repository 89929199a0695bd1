/// \file
/// Percent-decoding of request text (RFC 3986 §2.1), and `decoded`, the string it gives:
/// a view of the raw bytes when there was nothing to decode (no copy, no allocation), an
/// owned copy otherwise. Query strings and form bodies decode with '+' as a space
/// (application/x-www-form-urlencoded); path segments do not.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace saturn::http {

/// A decoded string: views the bytes it was decoded from when they needed no decoding,
/// owns its bytes otherwise. The view of an owning `decoded` points into the object, so the
/// rvalue accessors are deleted: `std::string_view v = q.get("x").value();` does not
/// compile; name the `decoded` first, or take `str()`. Threading: a plain value.
class decoded {
 public:
  decoded() noexcept = default;
  /// Views `v` (which must outlive this object).
  explicit decoded(std::string_view v) noexcept : m_view(v) {}
  /// Owns `s`.
  explicit decoded(std::string s) noexcept : m_owned(std::move(s)), m_owns(true) {}

  /// The decoded bytes.
  std::string_view view() const& noexcept { return m_owns ? std::string_view(m_owned) : m_view; }
  std::string_view view() const&& = delete;
  operator std::string_view() const& noexcept { return view(); }
  operator std::string_view() const&& = delete;
  /// A copy of the bytes (moved out when this is an owning rvalue).
  std::string str() const& { return std::string(view()); }
  std::string str() && { return m_owns ? std::move(m_owned) : std::string(m_view); }

  const char* data() const& noexcept { return view().data(); }
  std::size_t size() const noexcept { return m_owns ? m_owned.size() : m_view.size(); }
  bool empty() const noexcept { return size() == 0; }
  /// True if decoding made a copy (the raw bytes had an escape, or a '+' in form mode).
  bool owns() const noexcept { return m_owns; }

  friend bool operator==(const decoded& a, const decoded& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const decoded& a, std::string_view b) noexcept { return a.view() == b; }

 private:
  std::string_view m_view;
  std::string m_owned;
  bool m_owns = false;
};

/// Which decoding applies: `path` (a path segment: only %XX) or `form`
/// (application/x-www-form-urlencoded names and values: %XX, and '+' is a space).
enum class decode_mode { path, form };

namespace detail {
/// Decodes `raw`, which has something to decode. See percent_decode.
std::string decode_escaped(std::string_view raw, decode_mode mode);
/// True if percent_decode(raw, mode) == want, computed without allocating.
bool decoded_equals(std::string_view raw, decode_mode mode, std::string_view want) noexcept;
/// True if `raw` contains a byte that decoding in `mode` would change or drop.
inline bool needs_decoding(std::string_view raw, decode_mode mode) noexcept {
  if (raw.empty())
    return false;
  if (std::memchr(raw.data(), '%', raw.size()) != nullptr)
    return true;
  return mode == decode_mode::form && std::memchr(raw.data(), '+', raw.size()) != nullptr;
}
}  // namespace detail

/// Decodes `raw`: each '%' followed by two hex digits becomes the byte they spell (so
/// "%2F" gives '/' and "%00" a NUL); in `form` mode each '+' becomes a space first, so
/// "%2B" still gives '+'. A '%' not followed by two hex digits is kept as it is ("%zz"
/// stays "%zz", as the WHATWG URL standard's percent-decode does). The result is bytes:
/// invalid UTF-8 is not replaced. Returns a view of `raw` when nothing needed decoding.
/// Threading: any thread; does not suspend.
inline decoded percent_decode(std::string_view raw, decode_mode mode) {
  if (!detail::needs_decoding(raw, mode))
    return decoded(raw);
  return decoded(detail::decode_escaped(raw, mode));
}

}  // namespace saturn::http
