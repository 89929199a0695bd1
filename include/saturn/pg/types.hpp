/// \file
/// Typed parameters and results. A parameter's C++ type picks its PostgreSQL type and wire
/// format; a result column is read with `row::get<T>(i)`.
///
///  C++ type                          parameter sent as          readable from columns of type
///  bool                              bool (binary)              bool
///  std::int16_t / int32_t / int64_t  int2 / int4 / int8         int2, int4, int8, oid (range-checked)
///  float / double                    float4 / float8            float4, float8 (float: float4 only)
///  std::string, string_view, char*   text, type left to the     any column (its text form;
///                                    server ("unknown")         jsonb/json as their JSON text)
///  std::string_view (read only)                                 text, varchar, bpchar, name, json,
///                                                               jsonb and text-format columns: a
///                                                               view into the row, no copy
///  pg::bytea                         bytea (binary)             bytea
///  pg::timestamp                     timestamptz (binary)       timestamp, timestamptz
///  std::optional<T>, std::nullopt    NULL or T                  NULL or T
///
/// A NULL read into a non-optional T is errc::null; a type that does not fit is errc::type.
/// Threading: plain value types.
#pragma once

#include <saturn/pg/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace saturn::pg {

/// Type OIDs this client knows.
namespace oid {
inline constexpr std::uint32_t unknown = 0, boolean = 16, bytea = 17, name = 19, int8 = 20, int2 = 21, int4 = 23,
                               text = 25, oid = 26, json = 114, float4 = 700, float8 = 701, bpchar = 1042,
                               varchar = 1043, timestamp = 1114, timestamptz = 1184, jsonb = 3802;
}

/// Binary data (a bytea value).
struct bytea {
  std::vector<std::byte> data;
  friend bool operator==(const bytea&, const bytea&) = default;
};

/// A point in time with microsecond precision (PostgreSQL's resolution), UTC.
using timestamp = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;

/// Parameters encoded for a Bind message: their type OIDs, formats and values.
/// Threading: one task at a time.
class params {
 public:
  /// Appends NULL (type left to the server).
  void add_null(std::uint32_t type = oid::unknown) {
    head(type, 0);
    put32(0xffffffffu);
  }
  void add(bool v) { binary(oid::boolean, static_cast<std::uint8_t>(v ? 1 : 0)); }
  void add(std::int16_t v) { binary(oid::int2, static_cast<std::uint16_t>(v)); }
  void add(std::int32_t v) { binary(oid::int4, static_cast<std::uint32_t>(v)); }
  void add(std::int64_t v) { binary(oid::int8, static_cast<std::uint64_t>(v)); }
  void add(long long v) { add(static_cast<std::int64_t>(v)); }
  void add(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    binary(oid::float4, u);
  }
  void add(double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, 8);
    binary(oid::float8, u);
  }
  void add(std::string_view v) {
    head(oid::unknown, 0);
    put32(static_cast<std::uint32_t>(v.size()));
    m_values.append(v);
  }
  void add(const std::string& v) { add(std::string_view(v)); }
  void add(const char* v) { add(std::string_view(v)); }
  void add(const bytea& v) {
    head(oid::bytea, 1);
    put32(static_cast<std::uint32_t>(v.data.size()));
    m_values.append(reinterpret_cast<const char*>(v.data.data()), v.data.size());
  }
  void add(timestamp v);
  void add(std::nullopt_t) { add_null(); }
  template <class T>
  void add(const std::optional<T>& v) {
    if (v)
      add(*v);
    else
      add_null();
  }

  std::size_t size() const noexcept { return m_types.size(); }
  const std::vector<std::uint32_t>& types() const noexcept { return m_types; }
  const std::vector<std::int16_t>& formats() const noexcept { return m_formats; }
  /// The values as a Bind message carries them: per value, a big-endian int32 length (-1
  /// for NULL) then the bytes.
  const std::string& values() const noexcept { return m_values; }
  void clear() noexcept {
    m_types.clear();
    m_formats.clear();
    m_values.clear();
  }

 private:
  void head(std::uint32_t type, std::int16_t format) {
    m_types.push_back(type);
    m_formats.push_back(format);
  }
  void put32(std::uint32_t v) {
    char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    m_values.append(b, 4);
  }
  template <class U>
  void binary(std::uint32_t type, U v) {
    head(type, 1);
    put32(sizeof(U));
    for (int i = static_cast<int>(sizeof(U)) - 1; i >= 0; --i)
      m_values.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
  }
  std::vector<std::uint32_t> m_types;
  std::vector<std::int16_t> m_formats;
  std::string m_values;
};

/// Adds each of `ps` to `out` in order.
template <class... P>
void add_params(params& out, const P&... ps) {
  (out.add(ps), ...);
}

/// A result column: its name, type OID and the wire format it arrives in (0 text, 1 binary).
struct column {
  std::string name;
  std::uint32_t type = 0;
  std::int16_t format = 0;
};

/// One value of a row as it came off the wire (`null` when SQL NULL).
struct field {
  const column* col = nullptr;
  const char* data = nullptr;
  std::int32_t size = -1;
  bool is_null() const noexcept { return size < 0; }
};

namespace detail {
result<bool> decode_bool(const field& f);
result<std::int64_t> decode_int(const field& f, std::int64_t lo, std::int64_t hi);
result<double> decode_float(const field& f, bool single);
result<std::string_view> decode_text(const field& f, std::string& scratch);
result<bytea> decode_bytea(const field& f);
result<timestamp> decode_timestamp(const field& f);
error null_error(const field& f);
error view_error(const field& f);

template <class T>
struct is_optional : std::false_type {};
template <class U>
struct is_optional<std::optional<U>> : std::true_type {};

/// Converts a field to T (see the table in the file comment).
template <class T>
result<T> decode(const field& f) {
  if constexpr (is_optional<T>::value) {
    if (f.is_null())
      return T{};
    auto inner = decode<typename T::value_type>(f);
    if (!inner)
      return inner.err();
    return T(std::move(*inner));
  } else {
    if (f.is_null())
      return null_error(f);
    if constexpr (std::is_same_v<T, bool>) {
      return decode_bool(f);
    } else if constexpr (std::is_integral_v<T>) {
      auto v = decode_int(f, static_cast<std::int64_t>(std::numeric_limits<T>::min()),
                          static_cast<std::int64_t>(std::numeric_limits<T>::max()));
      if (!v)
        return v.err();
      return static_cast<T>(*v);
    } else if constexpr (std::is_floating_point_v<T>) {
      auto v = decode_float(f, std::is_same_v<T, float>);
      if (!v)
        return v.err();
      return static_cast<T>(*v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::string scratch;
      auto v = decode_text(f, scratch);
      if (!v)
        return v.err();
      return scratch.empty() ? std::string(*v) : std::move(scratch);
    } else if constexpr (std::is_same_v<T, std::string_view>) {
      // lifetime: the view points into the row's bytes; a value that needs converting
      // to text (an integer, a bool) has no bytes to point at.
      std::string scratch;
      auto v = decode_text(f, scratch);
      if (!v)
        return v.err();
      if (!scratch.empty())
        return view_error(f);
      return *v;
    } else if constexpr (std::is_same_v<T, bytea>) {
      return decode_bytea(f);
    } else if constexpr (std::is_same_v<T, timestamp>) {
      return decode_timestamp(f);
    } else {
      static_assert(sizeof(T) == 0, "pg: no conversion from a column to this type");
    }
  }
}
}  // namespace detail

}  // namespace saturn::pg
