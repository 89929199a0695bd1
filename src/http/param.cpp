// The out-of-line parts of typed parameters: booleans, and the messages that name a
// parameter and quote its text.
#include <saturn/http/param.hpp>
#include <saturn/http/request.hpp>

#include <cstdio>
#include <cstring>

namespace saturn::http::detail {

int parse_bool(std::string_view text) noexcept {
  if (text == "1" || iequals(text, "true") || iequals(text, "on"))
    return 1;
  if (text == "0" || iequals(text, "false") || iequals(text, "off"))
    return 0;
  return -1;
}

std::string describe_param(std::string_view where, std::string_view name, const std::string_view* text,
                           const error& e) {
  constexpr std::size_t max_text = 64;
  auto quote = [](std::string& out, std::string_view s) {
    out += '"';
    for (char c : s) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", u);
        out += buf;
      } else {
        out += c;
      }
    }
    out += '"';
  };
  std::string out(where);
  out += " parameter ";
  quote(out, name.substr(0, max_text));
  out += ": ";
  // The operation is "parameter: <what>"; the prefix is said already.
  std::string_view what = e.operation ? e.operation : "";
  constexpr std::string_view prefix = "parameter: ";
  if (what.substr(0, prefix.size()) == prefix)
    what.remove_prefix(prefix.size());
  out += what.empty() ? std::string_view(e.code.message()) : what;
  if (text) {
    out += ": ";
    quote(out, text->substr(0, max_text));
    if (text->size() > max_text)
      out += "...";
  }
  return out;
}

}  // namespace saturn::http::detail
