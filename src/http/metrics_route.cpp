// add_metrics_route: GET /metrics with metrics::render().
#include <saturn/http/metrics_route.hpp>
#include <saturn/metrics/render.hpp>

namespace saturn::http {

void add_metrics_route(router& r, std::string_view path) {
  r.get(path, [](const request&) -> task<response> {
    co_return response(200, metrics::content_type, metrics::render());
  });
}

}  // namespace saturn::http
