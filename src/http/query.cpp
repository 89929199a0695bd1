// Lookups over a raw query string: each walks the pairs once and compares names decoded
// on the fly, so a lookup allocates only for the value it returns, if that needs decoding.
#include <saturn/http/query.hpp>

namespace saturn::http {

std::optional<query_param> query_params::find(std::string_view name) const noexcept {
  for (const query_param& p : *this)
    if (detail::decoded_equals(p.raw_name, decode_mode::form, name))
      return p;
  return std::nullopt;
}

std::size_t query_params::count(std::string_view name) const noexcept {
  std::size_t n = 0;
  for (const query_param& p : *this)
    n += detail::decoded_equals(p.raw_name, decode_mode::form, name) ? 1 : 0;
  return n;
}

std::vector<decoded> query_params::get_all(std::string_view name) const {
  std::vector<decoded> out;
  for (const query_param& p : *this)
    if (detail::decoded_equals(p.raw_name, decode_mode::form, name))
      out.push_back(p.value());
  return out;
}

std::string query_params::describe(std::string_view name, const error& e) const {
  auto p = find(name);
  if (!p)
    return detail::describe_param("query", name, nullptr, e);
  decoded v = p->value();
  std::string_view text = v.view();
  return detail::describe_param("query", name, &text, e);
}

}  // namespace saturn::http
