// In-world TCP: a connection between two endpoints of the simulated program is carried by
// an AF_UNIX stream pair, not by loopback TCP.
//
// Why: loopback TCP decides some things on real time, which the simulation does not own —
// the handshake's last step and the accept queue (softirq work, deferred to ksoftirqd on
// a busy machine), delayed ACKs, pacing and small-queue limits sized from measured round
// trips. The same seed then gave other receive sizes and accept orders in another process
// run (docs/decisions/simulation.md). A unix stream socket moves bytes inside the sending
// syscall, with no timer and no deferred work, and the world keeps the accept queue: what
// every operation returns depends only on what came before it, which the seed orders.
//
// How: the world knows the program's listeners (net::listen_socket tells it through
// sim_note_listener; an ACCEPT on any other socket registers it too). A CONNECT to a port
// one of them still listens on makes no TCP connection: the client's descriptor is
// replaced (dup3, its descriptor and file flags kept) by one end of a fresh socketpair,
// and the other end joins the port's accept queue, kept by the world in connect order.
// An ACCEPT on a listener of that port takes the queue's first connection before any
// real one (a client outside the world still connects for real). Each end answers
// getsockname and getpeername as the TCP connection it stands for would
// (net::stream_socket asks through sim_socket_name): 127.0.0.1 or ::1, the listener's
// port, and a client port given out by the world (from 40000 up, skipping the program's
// listening ports), so world partitions and resets by port, and a program that logs
// addresses, see TCP.
//
// What differs from TCP, on purpose or not modelled: the accept queue has no backlog
// limit, and listeners sharing a port with SO_REUSEPORT share one queue; TCP-level
// socket options (TCP_NODELAY, keepalive tuning) fail with EOPNOTSUPP (saturn's own
// socket code ignores that here); buffer sizes are a unix socket's (the sender's
// SO_SNDBUF bounds what is in flight); a close with SO_LINGER 0 made through the ring
// resets the peer (its operations fail with ECONNRESET), one made with a plain close(2)
// is an orderly close. A listener closed or shut down with connections still queued
// resets them, as the kernel does.
#include "ring/sim/kernel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace saturn::ring {

std::uint16_t port_of(const ::sockaddr_storage& a) noexcept {
  if (a.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const ::sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const ::sockaddr_in6&>(a).sin6_port);
  return 0;
}

namespace {

/// The socket inode behind `fd`, or 0 when it is not a socket.
unsigned long socket_ino(int fd) noexcept {
  struct ::stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
    return 0;
  return static_cast<unsigned long>(st.st_ino);
}

/// Puts `from`'s file under descriptor number `to`, keeping `to`'s close-on-exec flag and
/// its file status flags (O_NONBLOCK).
bool replace_file(int from, int to) noexcept {
  const int fl = ::fcntl(to, F_GETFL);
  const int fdfl = ::fcntl(to, F_GETFD);
  if (fl < 0 || fdfl < 0)
    return false;
  if (::dup3(from, to, (fdfl & FD_CLOEXEC) != 0 ? O_CLOEXEC : 0) < 0)
    return false;
  ::fcntl(to, F_SETFL, fl & O_NONBLOCK);
  return true;
}

std::uint16_t local_port(int fd) noexcept {
  ::sockaddr_storage a{};
  ::socklen_t len = sizeof a;
  return ::getsockname(fd, reinterpret_cast<::sockaddr*>(&a), &len) == 0 ? port_of(a) : 0;
}

void set_port(::sockaddr_storage& a, std::uint16_t port) noexcept {
  if (a.ss_family == AF_INET)
    reinterpret_cast<::sockaddr_in&>(a).sin_port = htons(port);
  else if (a.ss_family == AF_INET6)
    reinterpret_cast<::sockaddr_in6&>(a).sin6_port = htons(port);
}

}  // namespace

void sim_kernel::note_listener(int fd) {
  const std::uint16_t port = local_port(fd);
  const unsigned long ino = socket_ino(fd);
  if (port == 0 || ino == 0)
    return;
  std::vector<world_listener>& ls = m_listeners[port];
  for (const world_listener& l : ls)
    if (l.ino == ino)
      return;
  ls.push_back(world_listener{fd, ino});
}

bool sim_kernel::listening(std::uint16_t port) {
  auto it = m_listeners.find(port);
  if (it == m_listeners.end())
    return false;
  std::vector<world_listener>& ls = it->second;
  ls.erase(std::remove_if(ls.begin(), ls.end(),
                          [](const world_listener& l) {
                            int on = 0;
                            ::socklen_t len = sizeof on;
                            return socket_ino(l.fd) != l.ino ||
                                   ::getsockopt(l.fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) != 0 || on == 0;
                          }),
           ls.end());
  if (!ls.empty())
    return true;
  m_listeners.erase(it);
  return false;
}

bool sim_kernel::connect_in_world(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  if (m_listeners.empty() || sqe.off > sizeof(::sockaddr_storage))
    return false;
  ::sockaddr_storage target{};
  std::memcpy(&target, reinterpret_cast<const void*>(sqe.addr), static_cast<std::size_t>(sqe.off));
  const std::uint16_t port = port_of(target);
  if (port == 0 || !listening(port))
    return false;  // nothing of the program's listens there: a real connect (refused, or outside)
  const int fd = sqe.fd;
  // The program's descriptor must still name the socket the connect was submitted on.
  const unsigned long ino = socket_ino(op->fd());
  if (ino == 0 || (fd != op->fd() && socket_ino(fd) != ino))
    return false;
  std::uint16_t client_port = local_port(fd);  // a client bound to a port keeps it
  for (int tries = 0; client_port == 0 && tries < 20'000; ++tries) {
    m_next_port = m_next_port < 40'000 || m_next_port >= 59'999 ? 40'000 : static_cast<std::uint16_t>(m_next_port + 1);
    if (m_listeners.count(m_next_port) == 0)
      client_port = m_next_port;
  }
  int pair[2];
  if (client_port == 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return false;
  if (!replace_file(pair[0], fd) || (op->fd() != fd && !replace_file(pair[0], op->fd()))) {
    ::close(pair[0]);
    ::close(pair[1]);
    return false;  // (a half-done swap leaves the op on the program's descriptor: it connects)
  }
  ::close(pair[0]);
  world_socket client, server;
  client.local = target;  // a loopback connection's local address is the address connected to
  set_port(client.local, client_port);
  client.peer = target;
  client.len = static_cast<::socklen_t>(sqe.off);
  server.local = client.peer;
  server.peer = client.local;
  server.len = client.len;
  const unsigned long client_ino = socket_ino(fd);
  const unsigned long server_ino = socket_ino(pair[1]);
  client.peer_ino = server_ino;
  server.peer_ino = client_ino;
  m_world_sockets[client_ino] = client;
  m_world_sockets[server_ino] = server;
  m_accept_queue[port].push_back(pair[1]);
  return true;
}

bool sim_kernel::accept_ready(int listener_fd) const noexcept {
  if (m_accept_queue.empty())
    return false;
  auto it = m_accept_queue.find(local_port(listener_fd));
  return it != m_accept_queue.end() && !it->second.empty();
}

bool sim_kernel::accept_in_world(sim_op* op, int& res) {
  const io_uring_sqe& sqe = op->sqe();
  if (m_accept_queue.empty())
    return false;
  const std::uint16_t port = local_port(op->fd());
  auto it = m_accept_queue.find(port);
  if (it == m_accept_queue.end() || it->second.empty())
    return false;
  if (!listening(port)) {
    reap_accept_queues();
    return false;  // the real accept says what a closed or shut-down listener says
  }
  const int fd = it->second.front();
  it->second.pop_front();
  if (it->second.empty())
    m_accept_queue.erase(it);
  const int flags = static_cast<int>(sqe.accept_flags);
  ::fcntl(fd, F_SETFD, (flags & SOCK_CLOEXEC) != 0 ? FD_CLOEXEC : 0);
  ::fcntl(fd, F_SETFL, (flags & SOCK_NONBLOCK) != 0 ? O_NONBLOCK : 0);
  ::sockaddr_storage client{};
  ::socklen_t client_len = 0;
  auto* len = reinterpret_cast<::socklen_t*>(sqe.addr2);
  if (sqe.addr != 0 && len != nullptr && world_socket_name(fd, true, client, client_len)) {
    std::memcpy(reinterpret_cast<void*>(sqe.addr), &client, std::min(*len, client_len));
    *len = client_len;
  }
  res = fd;
  return true;
}

void sim_kernel::reset_peer(unsigned long ino) noexcept {
  auto self = m_world_sockets.find(ino);
  if (self == m_world_sockets.end())
    return;
  auto peer = m_world_sockets.find(self->second.peer_ino);
  if (peer != m_world_sockets.end() && !peer->second.reset) {
    peer->second.reset = true;
    ++m_world_resets;
  }
}

void sim_kernel::reap_accept_queues() {
  if (m_accept_queue.empty())
    return;
  for (auto it = m_accept_queue.begin(); it != m_accept_queue.end();) {
    if (listening(it->first)) {
      ++it;
      continue;
    }
    // The listener closed or was shut down with these still queued: TCP resets them.
    for (const int fd : it->second) {
      reset_peer(socket_ino(fd));
      ::close(fd);  // wakes the client's waiting operations
    }
    it = m_accept_queue.erase(it);
  }
}

void sim_kernel::note_world_close(int fd) {
  if (m_world_sockets.empty())
    return;
  ::linger lg{};
  ::socklen_t len = sizeof lg;
  if (::getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len) != 0 || lg.l_onoff == 0 || lg.l_linger != 0)
    return;
  reset_peer(socket_ino(fd));
}

bool sim_kernel::world_reset(int fd) const noexcept {
  if (m_world_resets == 0)
    return false;
  auto it = m_world_sockets.find(socket_ino(fd));
  return it != m_world_sockets.end() && it->second.reset;
}

bool sim_kernel::world_socket_name(int fd, bool peer, ::sockaddr_storage& out, ::socklen_t& len) const noexcept {
  if (m_world_sockets.empty())
    return false;
  auto it = m_world_sockets.find(socket_ino(fd));
  if (it == m_world_sockets.end())
    return false;
  out = peer ? it->second.peer : it->second.local;
  len = it->second.len;
  return true;
}

bool sim_kernel::socket_ports(int fd, std::uint16_t& local, std::uint16_t& peer) const noexcept {
  ::sockaddr_storage a{};
  ::socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<::sockaddr*>(&a), &len) != 0)
    return false;
  if (a.ss_family == AF_UNIX) {
    auto it = m_world_sockets.find(socket_ino(fd));
    if (it == m_world_sockets.end())
      return false;  // a real unix socket: no ports
    local = port_of(it->second.local);
    peer = port_of(it->second.peer);
    return true;
  }
  local = port_of(a);
  len = sizeof a;
  peer = ::getpeername(fd, reinterpret_cast<::sockaddr*>(&a), &len) == 0 ? port_of(a) : 0;
  return true;
}

}  // namespace saturn::ring
