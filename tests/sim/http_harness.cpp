// The HTTP scenarios' server and the end of a run (http_harness.hpp).
#include "sim/http_harness.hpp"
#include "sim/scenarios.hpp"

#include <saturn/net.hpp>

#include <chrono>
#include <exception>
#include <stdexcept>

namespace saturn::sim_scenarios {

using namespace std::chrono_literals;

std::string body_of(std::size_t n) {
  std::string b(n, 'a');
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<char>('a' + (i * 7 + n) % 26);
  return b;
}

task<void> serve_scenario(sim::world& w, std::function<std::vector<join_handle<void>>(std::uint16_t port)> start,
                          std::string who) {
  auto fail = [&who](const std::string& what) { throw std::runtime_error(who + ": " + what); };
  http::router routes;
  routes.get("/data", [](const http::request& req) -> task<http::response> {
    const int n = req.query().get_or<int>("n", 0);
    co_return http::response::text(body_of(static_cast<std::size_t>(n)));
  });
  routes.post("/upload", [](const http::request& req) -> task<http::response> {
    co_return http::response::text(std::to_string(req.body().view().size()));
  });
  http::server_options so;
  so.header_timeout = 200ms;
  so.idle_timeout = 300ms;
  so.send_timeout = 100ms;
  so.multishot_receive = w.random_below(2) == 0;  // both receive paths
  http::server srv(routes, so);
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!l)
    fail("bind: " + l.err().message());
  auto served = spawn(srv.serve(*l));
  std::vector<join_handle<void>> clients = start(l->local_address()->port());
  std::exception_ptr first;
  co_await await_all(clients, first);
  srv.stop();
  auto r = co_await served;
  if (first)
    std::rethrow_exception(first);
  if (!r)
    fail("serve: " + r.err().message());
  if (srv.connections() != 0)
    fail(std::to_string(srv.connections()) + " connection(s) left after serve() returned");
}

}  // namespace saturn::sim_scenarios
