// What the HTTP/1.1 and HTTP/2 scenarios share (http_scenario.cpp, h2_scenario.cpp): the
// server they run, its routes, and the end of a run (every client awaited, the server
// stopped and drained).
#pragma once

#include <saturn/http.hpp>
#include <saturn/sim/world.hpp>
#include <saturn/task.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace saturn::sim_scenarios {

/// n bytes whose content depends on n: what GET /data?n=N answers.
std::string body_of(std::size_t n);

/// Runs the scenarios' server on a loopback port — GET /data?n=N answers body_of(N), POST
/// /upload the upload's size; header timeout 200 ms, idle 300 ms, send 100 ms; the
/// receive mode chosen by the seed — with the clients `start(port)` spawns. Every client
/// is awaited before anything is rethrown (their tasks use the server, which lives in
/// this frame); then the server is stopped, serve() must end well and leave no
/// connection. Failures are std::runtime_error prefixed with `who`.
task<void> serve_scenario(sim::world& w, std::function<std::vector<join_handle<void>>(std::uint16_t port)> start,
                          std::string who);

}  // namespace saturn::sim_scenarios
