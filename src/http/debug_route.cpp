// add_debug_routes: GET /debug/tasks with metrics::render_debug_dump(), taken on a thread
// of its own that wakes the handler through an event.
#include <saturn/http/debug_route.hpp>
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/sync/event.hpp>

#include <memory>
#include <thread>

namespace saturn::http {

namespace {
struct pending_dump {
  event done;
  std::string text;
};
}  // namespace

void add_debug_routes(router& r, std::string_view path) {
  r.get(path, [](const request&) -> task<response> {
    // lifetime: shared with the dumping thread, so a handler that goes away (its
    // connection closed) leaves the text and the event to that thread.
    auto p = std::make_shared<pending_dump>();
    std::thread([p] {
      p->text = metrics::render_debug_dump();
      p->done.set();
    }).detach();
    auto ok = co_await p->done.wait();
    if (!ok)
      co_return response(503, "text/plain", "the dump was cancelled\n");
    co_return response(200, "text/plain; charset=utf-8", std::move(p->text));
  });
}

}  // namespace saturn::http
