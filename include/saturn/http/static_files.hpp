/// \file
/// `http::static_files`: a handler that serves the files under one directory.
///
///     saturn::http::static_options opts;
///     opts.precompressed = true;                       // serve app.js.br / app.js.gz
///     routes.get("/static/{*path}", saturn::http::static_files(dir + "/static", opts));
///
/// What it answers (GET and HEAD; register it with get() and the router answers other
/// methods with 405 and Allow):
/// - 200 with the file, Content-Type by extension (static_content_type), a strong ETag
///   `"<hex size>-<hex mtime ns>"`, Last-Modified (IMF-fixdate), Accept-Ranges: bytes;
/// - 304 when If-None-Match matches the ETag (a list, weak comparison, `*`), or, when the
///   request has no If-None-Match, when If-Modified-Since is not older than the file;
/// - 206 with Content-Range for one satisfiable `Range: bytes=a-b` / `a-` / `-n`, 416 with
///   `Content-Range: bytes */<size>` for an unsatisfiable one; a malformed Range or one with
///   several ranges is ignored (200 with the whole file, RFC 9110 §14.2); If-Range with the
///   current ETag or Last-Modified keeps the range, anything else gets the whole file;
/// - 404 for a missing file, a path that tries to leave the root (a `..` segment, encoded
///   or not; a symlink that resolves outside the root; a NUL), and hidden files unless
///   static_options::hidden; 403 for a directory without an index file, a file that is
///   not a regular file (a FIFO, a device), a permission error, or a body over
///   max_file_size; 400 for a malformed percent-escape; 500 for an I/O error;
/// - 301 to the same path plus '/' for a directory asked without it (`/static/docs` →
///   `/static/docs/`), so relative links in its index resolve; `/static/docs/` serves
///   `docs/index.html`.
/// Not handled: If-Match and If-Unmodified-Since (meant for state-changing methods).
///
/// Path safety: the catch-all value is percent-decoded once, then every segment is
/// checked ('\' is an ordinary byte, not a separator), and the file is opened with
/// openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) relative to a descriptor of the root,
/// so the kernel refuses any resolution that leaves it — symlinks included; a symlink
/// whose target stays inside is followed, but only if it is relative (an absolute
/// symlink is refused even when it points inside). A kernel without openat2 (< 5.6):
/// plain openat, then the opened file's real path (/proc/self/fd) must lie under the
/// root's real path.
///
/// I/O: open, statx and the reads go through the worker's ring (fs::file); the handler
/// suspends on them and never blocks its worker. A body (or requested range) up to 256 KiB
/// is read whole into the response; a larger one is streamed (response::stream): read and
/// sent 64 KiB at a time, so a response holds 64 KiB of the file whatever its size. HEAD
/// reads nothing.
#pragma once

#include <saturn/http/router.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saturn::http {

/// How static_files serves. Threading: a plain value, copied into the handler.
struct static_options {
  /// The route parameter holding the path under the root (the `{*path}` of the route).
  std::string param = "path";
  /// Serve a precompressed sibling — `x.br`, else `x.gz` — in place of `x` when the
  /// request's Accept-Encoding prefers it (negotiate_encoding), with Content-Encoding, a
  /// variant ETag (variant_etag) and `Vary: Accept-Encoding` (sent on every answer of this
  /// handler, identity ones too). Requests with a Range header get the identity file (a
  /// range addresses the identity bytes). Off by default: the siblings must be kept in
  /// sync with their originals by whoever deploys them.
  bool precompressed = false;
  /// The file served for a directory (`/static/` → `static/index.html`); empty: a
  /// directory is 403.
  std::string index = "index.html";
  /// Serve files and directories whose name starts with '.' (`.env`, `.git/config`).
  /// Off by default: they are answered 404 as if absent.
  bool hidden = false;
  /// The largest body one response sends (the whole file, or the range asked for): a
  /// bigger one is answered 403. Large bodies are streamed, so this is a policy (how big a
  /// file this route publishes), not a memory bound.
  std::size_t max_file_size = std::size_t{64} << 20;
  /// Keep the bytes of small files in memory (keyed by path, checked against size and
  /// mtime; the file is statx-ed again at most once per second, so a change shows within
  /// about a second). Off by default: the page cache already holds hot files, and a
  /// cache means a change can be served stale for up to a second.
  bool cache = false;
  /// The memory the cache may hold in all (file bytes); a file that does not fit is served
  /// from disk.
  std::size_t cache_budget = std::size_t{32} << 20;
  /// The largest file the cache keeps.
  std::size_t cache_max_file = std::size_t{1} << 20;
  /// Extra or overriding types: {extension without the dot, lower-case; media type},
  /// e.g. {"md", "text/markdown; charset=utf-8"}. Looked up before the built-in table.
  std::vector<std::pair<std::string, std::string>> mime_types{};
  /// A Cache-Control value for every 200/206/304 answer (empty: none).
  std::string cache_control{};
};

/// A handler serving the files under `root` (see the file comment). The root is opened
/// once, here (a synchronous open of a directory); if that fails the handler tries again
/// per request and answers 404 while it is missing. The handler may run on every worker at
/// once (its cache is locked). Threading: call from any thread before serving; the
/// returned handler follows the router's rules. Cancellation: a stopped request ends with
/// its current ring operation (the connection is going away; nothing is answered).
handler static_files(std::string root, static_options opts = {});

/// The Content-Type static_files sends for a file name, from its extension
/// (case-insensitive): text types carry `; charset=utf-8`; unknown:
/// application/octet-stream. `extra` is searched first (as static_options::mime_types).
/// Threading: any thread; does not allocate.
std::string_view static_content_type(std::string_view file_name,
                                     const std::vector<std::pair<std::string, std::string>>& extra = {}) noexcept;

}  // namespace saturn::http
