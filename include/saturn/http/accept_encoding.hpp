/// \file
/// Choosing a response's content coding from the request's Accept-Encoding
/// (RFC 9110 §12.5.3 with the weights of §12.4.2).
///
/// The field is a comma-separated list of `coding [ OWS ";" OWS "q=" qvalue ]` elements,
/// coding names case-insensitive, "x-gzip" an alias of gzip. Rules applied:
/// - a coding listed with q > 0 is acceptable with that weight; q=0 means "not acceptable";
/// - `*` gives its weight to every coding not listed explicitly (identity included);
/// - identity is acceptable, with the lowest priority, unless excluded by `identity;q=0`
///   or by `*;q=0` without an identity element;
/// - among the acceptable codings the server offers, the highest weight wins; ties go
///   to the server's preference br, then gzip, then identity;
/// - an element that does not parse (a q that is not a qvalue: "q=2", "q=abc", "q=0.1234";
///   a parameter other than q; a bad token) is ignored as if absent, so a malformed
///   element can never make a coding acceptable that the rest of the field excludes;
///   empty list elements (",,") are allowed; a coding listed twice: its first valid
///   element counts;
/// - several Accept-Encoding fields are one list, in order (RFC 9110 §5.3);
/// - no Accept-Encoding field at all, or an empty one: identity.
#pragma once

#include <saturn/http/content_coding.hpp>
#include <saturn/http/request.hpp>

#include <span>
#include <string_view>

namespace saturn::http {

/// The codings a server is willing to produce (identity is always possible).
struct coding_offer {
  bool br = true;
  bool gzip = true;
};

/// The outcome of negotiation.
struct encoding_choice {
  /// The coding to answer with; identity when nothing better is acceptable.
  content_coding coding = content_coding::identity;
  /// False when the request excludes identity (`identity;q=0`, or `*;q=0` without an
  /// identity element) and accepts none of the offered codings. The server may then answer
  /// 406 Not Acceptable, or ignore the field and send identity anyway (RFC 9110 §12.5.3
  /// allows both); `coding` is identity in that case.
  bool acceptable = true;
};

/// Negotiates against one Accept-Encoding field value (or several joined with ",").
/// Threading: any thread; pure function, does not allocate.
encoding_choice negotiate_encoding(std::string_view accept_encoding, coding_offer offer = {}) noexcept;

/// Negotiates against every Accept-Encoding field of `headers` (a request's headers()),
/// taken together as one list. Threading: any thread; does not allocate.
encoding_choice negotiate_encoding(std::span<const header_field> headers, coding_offer offer = {}) noexcept;

}  // namespace saturn::http
