// static_files' Content-Type table, by extension.
#include <saturn/http/static_files.hpp>

#include <array>

namespace saturn::http {

namespace {

struct mime {
  std::string_view ext;
  std::string_view type;
};

// Text types carry charset=utf-8 (the files of a web app are UTF-8; a browser would
// otherwise guess). Sorted by nothing: a linear scan of a few dozen short strings.
constexpr std::array<mime, 40> k_types = {{
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "application/javascript; charset=utf-8"},
    {"mjs", "application/javascript; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"webmanifest", "application/manifest+json"},
    {"txt", "text/plain; charset=utf-8"},
    {"md", "text/markdown; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"xml", "application/xml"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/x-icon"},
    {"bmp", "image/bmp"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"wasm", "application/wasm"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"br", "application/x-brotli"},
    {"tar", "application/x-tar"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"ogg", "audio/ogg"},
    {"mp3", "audio/mpeg"},
    {"wav", "audio/wav"},
    {"m4a", "audio/mp4"},
    {"mpd", "application/dash+xml"},
    {"m3u8", "application/vnd.apple.mpegurl"},
    {"ics", "text/calendar; charset=utf-8"},
}};

bool ext_equal(std::string_view a, std::string_view lower) noexcept {
  if (a.size() != lower.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c + 32);
    if (c != lower[i])
      return false;
  }
  return true;
}

}  // namespace

std::string_view static_content_type(std::string_view file_name,
                                     const std::vector<std::pair<std::string, std::string>>& extra) noexcept {
  std::size_t slash = file_name.rfind('/');
  if (slash != std::string_view::npos)
    file_name.remove_prefix(slash + 1);
  std::size_t dot = file_name.rfind('.');
  if (dot == std::string_view::npos || dot == 0)
    return "application/octet-stream";
  std::string_view ext = file_name.substr(dot + 1);
  for (auto& [e, t] : extra)
    if (ext_equal(ext, e))
      return t;
  for (const mime& m : k_types)
    if (ext_equal(ext, m.ext))
      return m.type;
  return "application/octet-stream";
}

}  // namespace saturn::http
