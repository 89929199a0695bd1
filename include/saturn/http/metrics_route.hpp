/// \file
/// `http::add_metrics_route`: a `GET /metrics` route that answers with metrics::render()
/// (the Prometheus text format 0.0.4: saturn's runtime and HTTP metrics and the program's
/// own), for a Prometheus server to scrape.
///
///     saturn::http::router routes;
///     saturn::http::add_metrics_route(routes);  // GET /metrics
#pragma once

#include <saturn/http/router.hpp>

#include <string_view>

namespace saturn::http {

/// Adds `GET path` answering 200 with metrics::render() and Content-Type
/// metrics::content_type. Rendering takes the metrics registry's lock and allocates the
/// text (a scrape's cost, on the worker that serves it). Before serving, like router::add.
void add_metrics_route(router& r, std::string_view path = "/metrics");

}  // namespace saturn::http
