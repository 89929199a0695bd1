/// \file
/// `http::add_debug_routes`: `GET /debug/tasks`, the task dump as text
/// (metrics::render_debug_dump: every spawned task alive with its spawn site, age, worker
/// and state), for an operator to look inside a running server.
///
///     saturn::http::router routes;
///     saturn::http::add_debug_routes(routes);  // GET /debug/tasks
#pragma once

#include <saturn/http/router.hpp>

#include <string_view>

namespace saturn::http {

/// Adds `GET path` answering 200 text/plain with metrics::render_debug_dump(). The dump is
/// taken on a thread of its own, not on the worker serving the request (it pauses the
/// workers, a batch at a time); the handler suspends until it is done. Expose it to
/// operators only: it lists the program's spawn sites. Before serving, like router::add.
void add_debug_routes(router& r, std::string_view path = "/debug/tasks");

}  // namespace saturn::http
