// Which responses to compress, and the header values of a compressed variant.
//
// The policy is an allow-list: a type is compressed only if it is known to be textual or
// otherwise redundant. A deny-list would compress every type nobody thought of, including
// the many already-compressed binary formats (application/vnd.*, x-* archives); an
// allowed type missing from the list only costs some bytes on the wire.
//
// Compressed:     text/* (html, css, plain, csv, javascript, event-stream, ...),
//                 application/json, javascript, ecmascript, x-javascript, xml, wasm,
//                 x-ndjson, yaml, x-yaml, toml, graphql, x-www-form-urlencoded, rtf,
//                 x-sh, postscript, vnd.ms-fontobject, x-font-ttf, font-sfnt, manifest, any
//                 application/*+json and application/*+xml (problem+json, ld+json,
//                 atom+xml, rss+xml, xhtml+xml), font/ttf, font/otf, font/collection,
//                 image/svg+xml, image/bmp, image/x-icon, image/vnd.microsoft.icon.
// Not compressed: everything else — already compressed (image/png, jpeg, gif, webp, avif;
//                 audio/*, video/*; application/zip, gzip, x-gzip, x-brotli, zstd,
//                 x-7z-compressed, x-rar-compressed, x-xz, x-bzip2; font/woff, font/woff2;
//                 application/pdf, whose streams are deflated) and unknown bytes
//                 (application/octet-stream, an empty type).
#include <saturn/http/compression.hpp>

namespace saturn::http {
namespace {

std::string_view trim_ows(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool iends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

constexpr std::string_view compressible_application[] = {
    "json",    "javascript", "ecmascript", "x-javascript", "xml",  "wasm",
    "x-ndjson", "yaml",      "x-yaml",     "toml",         "graphql", "x-www-form-urlencoded",
    "rtf",     "x-sh",       "postscript", "vnd.ms-fontobject", "x-font-ttf", "font-sfnt",
    "manifest",
};

constexpr std::string_view compressible_other[] = {
    "font/ttf",  "font/otf",  "font/collection",          "image/svg+xml",
    "image/bmp", "image/x-icon", "image/vnd.microsoft.icon",
};

}  // namespace

bool compressible_type(std::string_view content_type) noexcept {
  std::string_view type = trim_ows(content_type.substr(0, content_type.find(';')));
  std::size_t slash = type.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == type.size())
    return false;
  std::string_view top = type.substr(0, slash), sub = type.substr(slash + 1);
  if (iequals(top, "text"))
    return true;
  if (iequals(top, "application")) {
    if (iends_with(sub, "+json") || iends_with(sub, "+xml"))
      return true;
    for (std::string_view s : compressible_application)
      if (iequals(sub, s))
        return true;
    return false;
  }
  for (std::string_view t : compressible_other)
    if (iequals(type, t))
      return true;
  return false;
}

bool should_compress(std::string_view content_type, std::size_t body_size, const compression_options& opts) noexcept {
  return body_size >= opts.min_size && compressible_type(content_type);
}

compression_decision decide_compression(std::span<const header_field> request_headers, std::string_view content_type,
                                        std::size_t body_size, const compression_options& opts) noexcept {
  compression_decision d;
  if (!should_compress(content_type, body_size, opts) || (!opts.offer.br && !opts.offer.gzip))
    return d;
  encoding_choice c = negotiate_encoding(request_headers, opts.offer);
  d.coding = c.coding;
  d.acceptable = c.acceptable;
  d.vary = true;
  return d;
}

std::string variant_etag(std::string_view etag, content_coding coding) {
  bool weak = etag.size() >= 2 && etag[0] == 'W' && etag[1] == '/';
  std::string_view quoted = weak ? etag.substr(2) : etag;
  if (coding == content_coding::identity || quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"')
    return std::string(etag);
  std::string out(etag.substr(0, etag.size() - 1));
  out += '-';
  out += coding_name(coding);
  out += '"';
  return out;
}

std::string add_vary_accept_encoding(std::string_view existing) {
  existing = trim_ows(existing);
  if (existing.empty())
    return "Accept-Encoding";
  std::string_view rest = existing;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = trim_ows(rest.substr(0, comma));
    if (item == "*" || iequals(item, "accept-encoding"))
      return std::string(existing);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  std::string out(existing);
  out += ", Accept-Encoding";
  return out;
}

}  // namespace saturn::http
