// static_files: resolve the request path under the root (openat2 beneath a root
// descriptor, through the ring), pick the representation (a directory's index, a
// precompressed sibling, the cache), answer conditionals and ranges, read the bytes.
#include <saturn/fs/file.hpp>
#include <saturn/http/accept_encoding.hpp>
#include <saturn/http/compression.hpp>
#include <saturn/http/static_files.hpp>

#include "http/static_detail.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <optional>

namespace saturn::http {

namespace {

constexpr std::uint64_t k_resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
// O_NONBLOCK: opening a FIFO someone left under the root must not wait for a writer; it is
// cleared again once statx shows a regular file (reads of regular files ignore it, but
// io_uring would answer EAGAIN instead of waiting for the disk).
constexpr int k_open_flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
constexpr auto k_revalidate = std::chrono::seconds(1);

/// What one static_files handler shares between its requests (and workers).
struct root_state {
  std::string root;
  static_options opts;
  saturn::detail::atomic<int> dirfd{-1};
  std::mutex open_mu;
  bool openat2 = false;    // the kernel has openat2 (probed when the root opens)
  std::string real_root;   // for the fallback check without openat2
  std::unique_ptr<detail::static_cache> cache;

  ~root_state() {
    int fd = dirfd.load(std::memory_order_relaxed);
    if (fd >= 0)
      ::close(fd);
  }
  /// The root's descriptor, opened now if it is not yet (a short synchronous metadata
  /// syscall: the root is opened once per handler, not per request); -1 if missing.
  int dir() {
    // ordering: acquire pairs with the release below, so openat2/real_root are visible.
    int fd = dirfd.load(std::memory_order_acquire);
    if (fd >= 0)
      return fd;
    std::lock_guard lock(open_mu);
    fd = dirfd.load(std::memory_order_relaxed);
    if (fd >= 0)
      return fd;
    fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return -1;
    ::open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = k_resolve;
    const long probe = ::syscall(SYS_openat2, fd, ".", &how, sizeof how);
    openat2 = probe >= 0 && !detail::pretend_no_openat2.load(std::memory_order_relaxed);
    if (probe >= 0)
      ::close(static_cast<int>(probe));
    if (!openat2) {
      char real[PATH_MAX];
      if (::realpath(root.c_str(), real) == nullptr) {
        ::close(fd);
        return -1;
      }
      real_root = real;
    }
    dirfd.store(fd, std::memory_order_release);
    return fd;
  }
};

/// The open status of an fs error: missing (or refused by RESOLVE_BENEATH) 404, denied
/// 403, anything else 500.
int status_of(const fs::fs_error& e) {
  switch (e.code.value()) {
    case ENOENT:
    case ENOTDIR:
    case EXDEV:  // the lookup would leave the root
    case ELOOP:
    case ENAMETOOLONG:
      return 404;
    case EACCES:
    case EPERM:
      return 403;
    default:
      return 500;
  }
}

/// Opens `rel` (never empty) under the root.
task<fs::fs_result<fs::file>> open_beneath(root_state& st, int dirfd, std::string rel) {
  if (st.openat2) {
    fs::fs_result<fs::file> f = co_await fs::file::open_at2(dirfd, std::move(rel), k_open_flags, k_resolve);
    co_return std::move(f);
  }
  // No openat2: open, then check where the descriptor really is.
  fs::fs_result<fs::file> f = co_await fs::file::open_at(dirfd, rel, k_open_flags);
  if (!f)
    co_return std::move(f);
  char link[32], real[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", f->fd());
  const ssize_t n = ::readlink(link, real, sizeof real);  // a short metadata syscall
  std::string_view where(real, n > 0 ? static_cast<std::size_t>(n) : 0);
  const std::string& top = st.real_root;
  const bool inside = where == top || (where.size() > top.size() && where.substr(0, top.size()) == top &&
                                       (top.back() == '/' || where[top.size()] == '/'));
  if (!inside)
    co_return fs::fs_errno_error(-EXDEV, "open", std::move(rel));
  co_return std::move(f);
}

/// One file chosen to answer with.
struct representation {
  fs::file file;                               // open, unless the bytes come from the cache
  std::shared_ptr<const std::string> cached;   // the whole file, when the cache holds it
  std::string name;                            // path under the root
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

/// Opens and stats `rel` ("" is the root); a directory becomes its index. Returns 0, or
/// the HTTP status to answer (404, 403, 301 for a directory asked without its '/').
task<int> open_regular(root_state& st, int dirfd, std::string rel, bool allow_index, representation& out) {
  std::string path = rel.empty() ? std::string(".") : rel;
  fs::fs_result<fs::file> f = co_await open_beneath(st, dirfd, std::move(path));
  if (!f)
    co_return status_of(f.err());
  auto stat_aw = f->stat(STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_MTIME);
  fs::fs_result<struct ::statx> sx = co_await stat_aw;
  if (!sx)
    co_return 500;
  if (S_ISDIR(sx->stx_mode)) {
    if (!allow_index || st.opts.index.empty())
      co_return 403;
    if (!rel.empty() && rel.back() != '/')
      co_return 301;
    std::string index = rel + st.opts.index;
    int r = co_await open_regular(st, dirfd, std::move(index), false, out);
    co_return r == 404 ? 403 : r;  // a directory without its index file
  }
  if (!S_ISREG(sx->stx_mode))
    co_return 403;
  const int fl = ::fcntl(f->fd(), F_GETFL);  // cheap, never blocks
  if (fl < 0 || ::fcntl(f->fd(), F_SETFL, fl & ~O_NONBLOCK) < 0)
    co_return 500;
  out.file = std::move(*f);
  out.name = std::move(rel);
  out.size = sx->stx_size;
  out.mtime_ns = static_cast<std::int64_t>(sx->stx_mtime.tv_sec) * 1'000'000'000 + sx->stx_mtime.tv_nsec;
  out.cached.reset();
  co_return 0;
}

/// open_regular through the cache: a fresh entry (checked less than a second ago) answers
/// with no syscall; an older one is checked by open + statx.
task<int> resolve(root_state& st, int dirfd, const std::string& key, bool allow_index, representation& out) {
  const auto now = detail::static_cache::clock::now();
  std::optional<detail::static_cache::entry> e;
  if (st.cache)
    e = st.cache->find(key);
  if (e && now - e->checked < k_revalidate) {
    out.cached = e->bytes;
    out.name = e->name;
    out.size = e->size;
    out.mtime_ns = e->mtime_ns;
    co_return 0;
  }
  int r = co_await open_regular(st, dirfd, key, allow_index, out);
  if (!e)
    co_return r;
  if (r != 0) {
    st.cache->erase(key);
    co_return r;
  }
  st.cache->confirm(key, out.size, out.mtime_ns, now);
  if (e->size == out.size && e->mtime_ns == out.mtime_ns && e->name == out.name)
    out.cached = e->bytes;  // unchanged: the bytes in memory are still the file's
  co_return r;
}

/// Bodies above this are streamed from the file (response::stream) rather than read whole.
constexpr std::uint64_t k_stream_above = 256 * 1024;

/// A streamed body with nothing to write (HEAD: the producer never runs).
task<result<void>> no_body(body_writer&) { co_return result<void>{}; }

/// Sends `len` bytes of `f` from `offset`, 64 KiB per read through the ring, then closes
/// the file.
task<result<void>> send_file_range(fs::file& f, std::uint64_t offset, std::uint64_t len, body_writer& w) {
  std::unique_ptr<char[]> buf(new char[64 * 1024]);
  std::uint64_t done = 0;
  while (done < len) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(64 * 1024, len - done));
    auto aw = f.read_at(std::span<std::byte>(reinterpret_cast<std::byte*>(buf.get()), want), offset + done);
    fs::fs_result<std::size_t> n = co_await aw;
    if (!n || *n == 0)  // an error, or the file shrank: end the connection (a truncated body)
      co_return error{n ? std::make_error_code(std::errc::io_error) : n.err().code, "read a static file"};
    auto wr = w.write(std::string_view(buf.get(), *n));
    result<void> sent = co_await std::move(wr);
    if (!sent)
      co_return sent;
    done += *n;
  }
  fs::fs_result<void> closed = co_await f.close();  // a read-only close has nothing to report
  (void)closed;
  co_return result<void>{};
}

/// Reads `len` bytes at `offset` into a string through the ring.
task<fs::fs_result<std::string>> read_bytes(const fs::file& f, std::uint64_t offset, std::size_t len) {
  std::string body(len, '\0');
  std::size_t done = 0;
  while (done < len) {
    auto aw = f.read_at(std::span<std::byte>(reinterpret_cast<std::byte*>(body.data()) + done, len - done),
                        offset + done);
    fs::fs_result<std::size_t> n = co_await aw;
    if (!n)
      co_return n.err();
    if (*n == 0)
      co_return fs::fs_error{std::make_error_code(std::errc::io_error), "read (the file shrank)", f.path()};
    done += *n;
  }
  co_return body;
}

bool any_field_hits(const request& req, std::string_view name, std::string_view etag) {
  for (const header_field& h : req.headers())
    if (iequals(h.name, name) && detail::none_match_hits(h.value, etag))
      return true;
  return false;
}

bool has_field(const request& req, std::string_view name) {
  for (const header_field& h : req.headers())
    if (iequals(h.name, name))
      return true;
  return false;
}

/// If-Range (RFC 9110 §13.1.5): the range applies only if the validator is current — the
/// ETag (strong comparison) or the exact Last-Modified date.
bool if_range_holds(std::string_view v, std::string_view etag, std::int64_t mtime_s) {
  if (v.empty())
    return true;
  if (v.front() == '"')
    return v == etag;
  if (v.size() >= 2 && v[0] == 'W' && v[1] == '/')
    return false;  // a weak tag never matches strongly
  auto d = detail::parse_imf_fixdate(v);
  return d && *d == mtime_s;
}

response status_response(int st, std::string_view what) {
  return response::text(std::string(what), st);
}

task<response> serve_static(std::shared_ptr<root_state> state, const request& req) {
  root_state& st = *state;
  const static_options& o = st.opts;
  std::string rel;
  const detail::path_verdict verdict = detail::decode_static_path(req.params().raw(o.param), o.hidden, rel);
  if (verdict == detail::path_verdict::bad_escape)
    co_return status_response(400, "bad percent-escape in the path\n");
  if (verdict != detail::path_verdict::ok)
    co_return status_response(404, "not found\n");
  const int dirfd = st.dir();
  if (dirfd < 0)
    co_return status_response(404, "not found\n");

  representation rep;
  const int found = co_await resolve(st, dirfd, rel, true, rep);
  if (found == 301) {
    response r = response::empty(301);
    std::string location = std::string(req.path) + "/";
    if (!req.raw_query.empty())
      location += "?" + std::string(req.raw_query);
    r.add_header("Location", std::move(location));
    co_return r;
  }
  if (found == 403)
    co_return status_response(403, "forbidden\n");
  if (found == 404)
    co_return status_response(404, "not found\n");
  if (found != 0)
    co_return status_response(500, "cannot read the file\n");

  const std::string_view type = static_content_type(rep.name, o.mime_types);
  const std::string_view range_field = req.header("Range");
  content_coding coding = content_coding::identity;
  if (o.precompressed && range_field.empty()) {
    coding_offer offer{};
    for (int attempt = 0; attempt < 2; ++attempt) {
      const encoding_choice choice = negotiate_encoding(req.headers(), offer);
      if (choice.coding == content_coding::identity)
        break;
      std::string sibling = rep.name + (choice.coding == content_coding::br ? ".br" : ".gz");
      representation variant;
      const int vr = co_await resolve(st, dirfd, sibling, false, variant);
      if (vr == 0) {
        if (rep.file.is_open()) {
          fs::fs_result<void> ignored = co_await rep.file.close();  // the identity file is not needed
          (void)ignored;
        }
        rep = std::move(variant);
        coding = choice.coding;
        break;
      }
      (choice.coding == content_coding::br ? offer.br : offer.gzip) = false;
    }
  }

  // The ETag of the file sent (a sibling has its own size and mtime), marked with its coding.
  const std::string file_etag = detail::make_etag(rep.size, rep.mtime_ns);
  const std::string etag = coding == content_coding::identity ? file_etag : variant_etag(file_etag, coding);
  const std::int64_t mtime_s = rep.mtime_ns / 1'000'000'000;
  const std::string last_modified = detail::imf_fixdate(mtime_s);
  auto validators = [&](response& r) {
    r.add_header("ETag", etag);
    r.add_header("Last-Modified", last_modified);
    if (o.precompressed)
      r.add_header("Vary", "Accept-Encoding");
    if (!o.cache_control.empty())
      r.add_header("Cache-Control", o.cache_control);
  };

  // Conditionals (RFC 9110 §13.2.2): If-None-Match, else If-Modified-Since.
  bool not_modified = false;
  if (has_field(req, "If-None-Match")) {
    not_modified = any_field_hits(req, "If-None-Match", etag);
  } else if (auto ims = detail::parse_imf_fixdate(req.header("If-Modified-Since")); ims) {
    not_modified = mtime_s <= *ims;
  }
  if (not_modified) {
    response r = response::empty(304);
    validators(r);
    co_return r;
  }

  std::uint64_t offset = 0, length = rep.size;
  int status = 200;
  if (!range_field.empty() && if_range_holds(req.header("If-Range"), etag, mtime_s)) {
    const detail::range_request rr = detail::parse_range(range_field, rep.size);
    if (rr.kind == detail::range_request::unsatisfiable) {
      response r = status_response(416, "range not satisfiable\n");
      r.add_header("Content-Range", "bytes */" + std::to_string(rep.size));
      validators(r);
      co_return r;
    }
    if (rr.kind == detail::range_request::single) {
      status = 206;
      offset = rr.range.first;
      length = rr.range.last - rr.range.first + 1;
    }
  }
  if (length > o.max_file_size)
    co_return status_response(403, "file too large to serve\n");

  std::string body;
  const bool head = req.method == "HEAD";
  const bool cacheable = st.cache && status == 200 && rep.size <= o.cache_max_file;
  std::optional<response> prepared;  // the answer, unless it is the body read below
  if (head) {
    // The head alone: the length is declared, nothing is read, copied or allocated.
    prepared = response::stream(status, std::string(type), no_body, length);
  } else if (rep.cached) {
    // Shared with the cache, not copied: the response keeps the bytes alive.
    prepared = response::with_shared_body(status, std::string(type), rep.cached, static_cast<std::size_t>(offset),
                                          static_cast<std::size_t>(length));
  } else if (length > k_stream_above && !cacheable) {
    // Large: read and sent one piece at a time through the ring; the file stays open in
    // the producer until the last piece.
    auto file = std::make_shared<fs::file>(std::move(rep.file));
    prepared = response::stream(
        status, std::string(type),
        [file, offset, length](body_writer& w) { return send_file_range(*file, offset, length, w); }, length);
  } else {
    fs::fs_result<std::string> read = co_await read_bytes(rep.file, offset, static_cast<std::size_t>(length));
    if (!read)
      co_return status_response(500, "cannot read the file\n");
    body = std::move(*read);
    if (cacheable) {
      auto bytes = std::make_shared<const std::string>(body);
      st.cache->put(coding == content_coding::identity ? rel : rep.name, rep.name, std::move(bytes), rep.mtime_ns,
                    detail::static_cache::clock::now());
    }
  }
  if (rep.file.is_open()) {
    fs::fs_result<void> ignored = co_await rep.file.close();  // a read-only close has nothing to report
    (void)ignored;
  }

  response r = prepared ? std::move(*prepared) : response(status, std::string(type), std::move(body));
  validators(r);
  r.add_header("Accept-Ranges", "bytes");
  if (coding != content_coding::identity)
    r.add_header("Content-Encoding", coding_name(coding));
  if (status == 206)
    r.add_header("Content-Range", "bytes " + std::to_string(offset) + "-" + std::to_string(offset + length - 1) +
                                      "/" + std::to_string(rep.size));
  co_return r;
}

}  // namespace

handler static_files(std::string root, static_options opts) {
  auto state = std::make_shared<root_state>();
  state->root = std::move(root);
  state->opts = std::move(opts);
  if (state->opts.cache)
    state->cache = std::make_unique<detail::static_cache>(state->opts.cache_budget);
  (void)state->dir();  // open now when it exists; otherwise per request until it does
  return [state](const request& req, const route_params&) { return serve_static(state, req); };
}

}  // namespace saturn::http
