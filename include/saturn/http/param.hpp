/// \file
/// Typed values of request parameters (query pairs, form fields, route segments): the
/// types `get<T>` reads, how it reads them, and the errors it returns.
///
/// Errors (std::errc conditions; compare with `r.err() == std::errc::...`):
///   - missing parameter:           std::errc::no_message_available (ENODATA)
///   - text that is not a T:        std::errc::invalid_argument (EINVAL)
///   - a number T cannot hold:      std::errc::result_out_of_range (ERANGE)
/// The error's operation says which ("parameter: not an integer"); query_params::describe
/// and route_params::describe name the parameter and quote its text, for a 400 body.
#pragma once

#include <saturn/result.hpp>

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace saturn::http {

/// The types a parameter can be read as: bool, the integer types other than the
/// character types, and the floating-point types.
template <class T>
concept param_type = std::is_same_v<T, bool> ||
                     (std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, signed char> &&
                      !std::is_same_v<T, unsigned char> && !std::is_same_v<T, wchar_t> &&
                      !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>) ||
                     std::is_floating_point_v<T>;

/// The operations named by parameter errors (see the file comment).
namespace param_error {
inline constexpr const char* missing = "parameter: missing";
inline constexpr const char* not_integer = "parameter: not an integer";
inline constexpr const char* integer_range = "parameter: integer out of range";
inline constexpr const char* not_number = "parameter: not a finite number";
inline constexpr const char* number_range = "parameter: number out of range";
inline constexpr const char* not_boolean = "parameter: not a boolean";
}  // namespace param_error

/// The error of a missing parameter.
inline error missing_param_error() noexcept {
  return error{std::make_error_code(std::errc::no_message_available), param_error::missing};
}

namespace detail {
/// 1 for a true text, 0 for a false one, -1 for neither (see parse_param).
int parse_bool(std::string_view text) noexcept;
}  // namespace detail

/// Reads all of `text` (already percent-decoded) as a T:
///   - integers: decimal digits with an optional leading '-' for signed types, as
///     std::from_chars reads them. No whitespace, no '+', no "0x", nothing after the
///     digits ("12x" and "12 " are errors); a value past T's range is result_out_of_range.
///   - floating point: std::from_chars' general format ("2.5", "-1e3", ".5"), the whole
///     text; infinities and NaN are errors (invalid_argument); a finite text past T's
///     range ("1e999") is result_out_of_range.
///   - bool: "true" "false" "1" "0" "on" "off", ASCII case-insensitive; anything else
///     (the empty text too) is an error.
/// Threading: any thread; does not suspend; does not allocate.
template <param_type T>
result<T> parse_param(std::string_view text) noexcept {
  const auto invalid = [](const char* op) { return error{std::make_error_code(std::errc::invalid_argument), op}; };
  const auto range = [](const char* op) { return error{std::make_error_code(std::errc::result_out_of_range), op}; };
  if constexpr (std::is_same_v<T, bool>) {
    int b = detail::parse_bool(text);
    if (b < 0)
      return invalid(param_error::not_boolean);
    return b == 1;
  } else {
    constexpr bool integral = std::is_integral_v<T>;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    T v{};
    std::from_chars_result r;
    if constexpr (integral)
      r = std::from_chars(first, last, v, 10);
    else
      r = std::from_chars(first, last, v, std::chars_format::general);
    if (text.empty() || r.ec == std::errc::invalid_argument || r.ptr != last)
      return invalid(integral ? param_error::not_integer : param_error::not_number);
    if (r.ec == std::errc::result_out_of_range)
      return range(integral ? param_error::integer_range : param_error::number_range);
    if constexpr (!integral)
      if (!std::isfinite(v))
        return invalid(param_error::not_number);
    return v;
  }
}

namespace detail {
/// `<where> parameter "<name>": <what failed>[: "<text>"]`, with `text` cut to 64 bytes
/// and bytes outside printable ASCII shown as \xNN (the result may be echoed to a client).
std::string describe_param(std::string_view where, std::string_view name, const std::string_view* text,
                           const error& e);
}  // namespace detail

}  // namespace saturn::http
