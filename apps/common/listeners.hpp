// bind_listeners: the servers' listening sockets — one, or one SO_REUSEPORT listener per
// worker (each worker then accepts its own connections: the servers place each
// listener's accept task on its worker with thread_pool::spawn_on).
#pragma once

#include <saturn/net.hpp>

#include <vector>

namespace apps {

/// Binds `n` listeners on `addr`: a plain one when n is 1, else n with SO_REUSEPORT. Before
/// those, a plain bind checks that the port is free: SO_REUSEPORT would let this process
/// join a port that another process of the same user listens on with SO_REUSEPORT, and
/// the kernel would split the connections between them. `multishot_accept`: see
/// listen_options::multishot (off: nothing is accepted while no accept() waits, so a
/// connection limit holds even under a burst of connects). Returns the first bind error.
/// Any thread.
inline saturn::result<std::vector<saturn::net::tcp_listener>> bind_listeners(const saturn::net::address& addr,
                                                                             unsigned n, bool multishot_accept = true) {
  if (n > 1) {
    auto probe = saturn::net::tcp_listener::bind(addr);
    if (!probe)
      return probe.err();
  }
  saturn::net::listen_options lo;
  lo.reuse_port = n > 1;
  lo.multishot = multishot_accept;
  std::vector<saturn::net::tcp_listener> ls;
  for (unsigned i = 0; i < n; ++i) {
    auto l = saturn::net::tcp_listener::bind(addr, lo);
    if (!l)
      return l.err();
    ls.push_back(std::move(*l));
  }
  return ls;
}

}  // namespace apps
