/// \file
/// `metrics::render()`: the Prometheus text exposition (format 0.0.4) of the global
/// registry — saturn's runtime metrics and the program's own — for a `/metrics` endpoint.
///
///     std::string body = saturn::metrics::render();
///     // serve it with Content-Type: saturn::metrics::content_type
#pragma once

#include <saturn/metrics/registry.hpp>

#include <string>
#include <string_view>

namespace saturn::metrics {

/// The Content-Type of render()'s text.
inline constexpr char content_type[] = "text/plain; version=0.0.4; charset=utf-8";

/// registry::global().render(). Any thread; takes the registry's lock; allocates.
std::string render();

/// A label value or HELP text escaped for the text format: backslash, double quote (label
/// values only) and newline as \\, \" and \n. Any thread.
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);
/// A sample value as the text format writes it: shortest round-trip form, +Inf, -Inf, NaN.
std::string format_value(double v);

}  // namespace saturn::metrics
