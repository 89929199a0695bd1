#include "routes.hpp"

#include <saturn/http/compress_response.hpp>
#include <saturn/http/query.hpp>
#include <saturn/http/static_files.hpp>
#include <saturn/http/websocket.hpp>

#include <sys/stat.h>

#include <charconv>
#include <cstdio>

namespace arena {

namespace {

using saturn::http::request;
using saturn::http::response;
using saturn::task;

response bad_request(std::string why) { return response(400, "text/plain", std::move(why) + "\n"); }

/// An integer written in decimal (a sign allowed), all of `s`.
std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// baseline, limited-conn: the query's a + b, plus the body's integer for a POST.
task<response> baseline(const request& req) {
  auto q = req.query();
  auto a = q.get<std::int64_t>("a");
  auto b = q.get<std::int64_t>("b");
  if (!a || !b)
    co_return bad_request(!a ? q.describe("a", a.err()) : q.describe("b", b.err()));
  std::int64_t sum = 0;
  if (__builtin_add_overflow(*a, *b, &sum))
    co_return bad_request("a + b does not fit in 64 bits");
  if (req.method == "POST") {
    auto body = parse_int(req.body().view());
    if (!body)
      co_return bad_request("the body must be a decimal integer");
    if (__builtin_add_overflow(sum, *body, &sum))
      co_return bad_request("the sum does not fit in 64 bits");
  }
  co_return response(200, "text/plain", std::to_string(sum));
}

task<response> pipeline(const request&) { co_return response::with_static_body(200, "text/plain", "ok"); }

// json, json-comp: serialized per request from the loaded items; compressed per request
// when Accept-Encoding asks (never when it is absent).
task<response> json(const request& req, const state& st) {
  auto count = req.params().get<std::int64_t>("count");
  if (!count || *count < 0)
    co_return bad_request("/json/{count}: count must be a non-negative integer");
  auto q = req.query();
  std::int64_t m = 1;  // HttpArena's readiness probe asks /json/1 without m
  if (q.has("m")) {
    auto mv = q.get<std::int64_t>("m");
    if (!mv)
      co_return bad_request(q.describe("m", mv.err()));
    m = *mv;
  }
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(*count), st.items.size());
  auto body = render_json(st.items, n, m);
  if (!body)
    co_return bad_request("a total does not fit in 64 bits");
  response resp = response::json(200, std::move(*body));
  saturn::http::compress_response(req, resp, st.cfg.compression);
  co_return resp;
}

// upload: the bytes of the body actually read, streamed through one window (the route
// streams its body: nothing of it is kept).
task<response> upload(const request& req) {
  std::uint64_t total = 0;
  for (;;) {
    auto piece = req.body().next_piece();
    auto got = co_await std::move(piece);
    if (!got) {
      if (got.err() == std::errc::message_size)
        co_return response(413, "text/plain", "request body too large\n");
      co_return response(400, "text/plain", got.err().message() + "\n");
    }
    if (got->empty())
      break;
    total += got->size();
  }
  co_return response(200, "text/plain", std::to_string(total));
}

// echo-ws: every message back with its opcode, nothing unsolicited (the load generator
// counts every frame it receives as an echo).
/// Echoes every message: over ws:// (session<tcp_stream&>) and wss:// on the TLS port
/// (session<tls_stream_ref>).
template <class Session>
task<void> echo_ws(Session& s) {
  for (;;) {
    auto m = co_await s.receive();
    if (!m || m->kind == saturn::http::websocket::message_kind::close)
      break;
    auto sent = co_await s.echo(*m);
    if (!sent)
      break;
  }
}

task<response> ws(const request& req) {
  co_return saturn::http::websocket::accept(req, [](auto& s) { return echo_ws(s); });
}

}  // namespace

bool load(const config& cfg, state& st) {
  st.cfg = cfg;
  bool all = true;
  std::string why;
  auto items = load_dataset(cfg.data_dir + "/dataset.json", why);
  if (items) {
    st.items = std::move(*items);
  } else {
    std::fprintf(stderr, "saturn-arena: dataset: %s (/json answers no items)\n", why.c_str());
    all = false;
  }
  struct stat sb{};
  st.have_static = ::stat((cfg.data_dir + "/static").c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
  if (!st.have_static) {
    std::fprintf(stderr, "saturn-arena: no %s/static folder (/static answers 404)\n", cfg.data_dir.c_str());
    all = false;
  }
  return all;
}

void add_routes(saturn::http::router& routes, const state& st) {
  routes.get("/baseline11", baseline);
  routes.post("/baseline11", baseline);
  routes.get("/baseline2", baseline);
  routes.get("/pipeline", pipeline);
  routes.get("/json/{count}", [&st](const request& req) { return json(req, st); });
  routes.post("/upload", upload, {.stream_body = true, .max_body = st.cfg.max_body});
  routes.get("/ws", ws);
  if (st.have_static) {
    // Engine entries may serve from memory and use the precompressed siblings
    // (docs/arena.md): both are documented options of static_files.
    saturn::http::static_options so;
    so.precompressed = true;
    so.cache = true;
    routes.get("/static/{*path}", saturn::http::static_files(st.cfg.data_dir + "/static", so));
  }
}

}  // namespace arena
