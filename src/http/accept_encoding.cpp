// Accept-Encoding negotiation (RFC 9110 §12.5.3). One pass over the list records, per
// coding the server knows, the weight of its first valid element; the choice is made
// afterwards so that element order never matters. Weights are kept in thousandths and
// doubled, so that 1 can stand for "identity, not listed": below every listed q > 0.
#include <saturn/http/accept_encoding.hpp>

#include "http/chars.hpp"

#include <cstdint>

namespace saturn::http {
namespace {

using detail::c_tchar;
using detail::char_table;

constexpr int not_listed = -1;
constexpr int implicit_identity = 1;  // weight of an identity nobody mentioned (listed q are even, >= 2)

bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }
bool is_tchar(char c) noexcept { return (char_table[static_cast<unsigned char>(c)] & c_tchar) != 0; }

void skip_ows(std::string_view s, std::size_t& i) noexcept {
  while (i < s.size() && is_ows(s[i]))
    ++i;
}

/// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths; -1 if not one.
int parse_qvalue(std::string_view v) noexcept {
  if (v.empty() || (v[0] != '0' && v[0] != '1'))
    return -1;
  int q = (v[0] - '0') * 1000;
  if (v.size() == 1)
    return q;
  if (v[1] != '.' || v.size() > 5)
    return -1;
  int scale = 100;
  for (std::size_t i = 2; i < v.size(); ++i, scale /= 10) {
    if (v[i] < '0' || v[i] > '9')
      return -1;
    q += (v[i] - '0') * scale;
  }
  return q > 1000 ? -1 : q;
}

enum class which : std::uint8_t { br, gzip, identity, star, other };

which classify(std::string_view token) noexcept {
  if (token == "*")
    return which::star;
  if (iequals(token, "br"))
    return which::br;
  if (iequals(token, "gzip") || iequals(token, "x-gzip"))
    return which::gzip;
  if (iequals(token, "identity"))
    return which::identity;
  return which::other;
}

struct weights {
  int br = not_listed, gzip = not_listed, identity = not_listed, star = not_listed;

  void record(which w, int q) noexcept {
    int* slot = w == which::br ? &br : w == which::gzip ? &gzip : w == which::identity ? &identity
                                   : w == which::star ? &star : nullptr;
    if (slot != nullptr && *slot == not_listed)  // first valid element wins
      *slot = q * 2;
  }

  /// Parses one field value's elements into the weights.
  void add_field(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
      skip_ows(s, i);
      std::size_t start = i;
      while (i < s.size() && is_tchar(s[i]))
        ++i;
      std::string_view token = s.substr(start, i - start);
      skip_ows(s, i);
      int q = 1000;
      bool ok = !token.empty() || i >= s.size() || s[i] == ',';  // an empty element is fine
      if (ok && !token.empty() && i < s.size() && s[i] == ';') {
        ++i;
        skip_ows(s, i);
        if (i + 1 < s.size() && (s[i] == 'q' || s[i] == 'Q') && s[i + 1] == '=') {
          i += 2;
          std::size_t vstart = i;
          while (i < s.size() && s[i] != ',' && !is_ows(s[i]) && s[i] != ';')
            ++i;
          q = parse_qvalue(s.substr(vstart, i - vstart));
          ok = q >= 0;
          skip_ows(s, i);
        } else {
          ok = false;  // a parameter other than the weight: not Accept-Encoding's grammar
        }
      }
      if (ok && i < s.size() && s[i] != ',')
        ok = false;  // something after the element
      if (ok && !token.empty())
        record(classify(token), q);
      while (i < s.size() && s[i] != ',')  // a malformed element is skipped whole
        ++i;
      if (i < s.size())
        ++i;  // the comma
    }
  }

  encoding_choice choose(coding_offer offer) const noexcept {
    auto weight_of = [&](int explicit_w, int fallback) { return explicit_w != not_listed ? explicit_w : fallback; };
    int star_w = star != not_listed ? star : 0;
    int w_br = offer.br ? weight_of(br, star_w) : 0;
    int w_gzip = offer.gzip ? weight_of(gzip, star_w) : 0;
    int w_id = weight_of(identity, star != not_listed ? star : implicit_identity);
    // Server preference on ties: br, gzip, identity (strictly greater replaces).
    encoding_choice c{content_coding::br, true};
    int best = w_br;
    if (w_gzip > best) {
      best = w_gzip;
      c.coding = content_coding::gzip;
    }
    if (w_id > best) {
      best = w_id;
      c.coding = content_coding::identity;
    }
    if (best <= 0)
      return {content_coding::identity, false};
    return c;
  }
};

}  // namespace

encoding_choice negotiate_encoding(std::string_view accept_encoding, coding_offer offer) noexcept {
  weights w;
  w.add_field(accept_encoding);
  return w.choose(offer);
}

encoding_choice negotiate_encoding(std::span<const header_field> headers, coding_offer offer) noexcept {
  weights w;
  for (const header_field& f : headers)
    if (iequals(f.name, "accept-encoding"))
      w.add_field(f.value);
  return w.choose(offer);
}

}  // namespace saturn::http
