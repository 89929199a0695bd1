// The text format's escaping and number formatting, and render() of the global registry.
#include <saturn/metrics/render.hpp>

#include <charconv>
#include <cmath>

namespace saturn::metrics {

std::string render() { return registry::global().render(); }

namespace {
std::string escape(std::string_view v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (quote && c == '"')
      out += "\\\"";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string escape_label_value(std::string_view v) { return escape(v, true); }
std::string escape_help(std::string_view v) { return escape(v, false); }

std::string format_value(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace saturn::metrics
