#include <saturn/http/middleware.hpp>

#include <saturn/http/compress_response.hpp>
#include <saturn/task/time.hpp>

namespace saturn::http {

handler wrap(handler fn, middleware m) {
  // lifetime: the returned handler owns both; the router keeps it as long as it routes, so
  // `inner` outlives every call (the middleware coroutine holds a reference to it).
  return [inner = std::move(fn), m = std::move(m)](const request& req, const route_params& p) {
    return m(req, p, inner);
  };
}

namespace {

task<response> run_with_deadline(std::chrono::milliseconds d, const request& req, const route_params& p,
                                 const handler& next) {
  task<response> t = next(req, p);
  auto r = co_await with_timeout(d, std::move(t));
  if (r)
    co_return std::move(*r);
  if (r.err() == std::errc::timed_out) {
    response late(504, "text/plain", "the handler did not answer in time\n");
    co_return late;
  }
  response stopping(503, "text/plain", "the server is stopping\n");  // the server's stop cancelled it
  stopping.close = true;
  co_return stopping;
}

task<response> run_compressed(compression_options opts, const request& req, const route_params& p,
                              const handler& next) {
  task<response> t = next(req, p);
  response resp = co_await std::move(t);
  compress_response(req, resp, opts);
  co_return resp;
}

}  // namespace

middleware deadline(std::chrono::milliseconds d) {
  return [d](const request& req, const route_params& p, const handler& next) {
    return run_with_deadline(d, req, p, next);
  };
}

middleware compression(compression_options opts) {
  return [opts](const request& req, const route_params& p, const handler& next) {
    return run_compressed(opts, req, p, next);
  };
}

}  // namespace saturn::http
