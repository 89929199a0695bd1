/// \file
/// `udp_socket`: datagrams with send_to / recv_from (sendmsg/recvmsg on the ring).
#pragma once

#include <saturn/net/address.hpp>
#include <saturn/net/detail/ops.hpp>

#include <unistd.h>

#include <span>
#include <utility>

namespace saturn::net {

using detail::datagram;

/// A UDP socket. Move-only; the destructor closes the fd.
/// Threading: awaits from any task; concurrent sends and receives from different tasks
/// are allowed (each is its own datagram operation).
class udp_socket {
 public:
  udp_socket() noexcept = default;
  explicit udp_socket(int fd) noexcept : m_fd(fd) {}
  udp_socket(udp_socket&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
  udp_socket& operator=(udp_socket&& o) noexcept {
    if (this != &o) {
      if (m_fd >= 0)
        ::close(m_fd);
      m_fd = std::exchange(o.m_fd, -1);
    }
    return *this;
  }
  ~udp_socket() {
    if (m_fd >= 0)
      ::close(m_fd);
  }

  /// A socket bound to `addr` (port 0: any free port).
  static result<udp_socket> bind(const address& addr) noexcept;

  /// Sends one datagram to `to`: the byte count. Suspends.
  detail::sendmsg_awaiter send_to(std::span<const std::byte> buf, const address& to) noexcept {
    return detail::sendmsg_awaiter("send_to", m_fd, static_cast<const void*>(buf.data()), buf.size(), &to);
  }
  /// Receives one datagram into `buf`: its size, sender, and whether it was truncated.
  detail::recvmsg_awaiter recv_from(std::span<std::byte> buf) noexcept {
    return detail::recvmsg_awaiter(m_fd, buf.data(), buf.size());
  }
  /// The bound address.
  result<address> local_address() const noexcept;
  int fd() const noexcept { return m_fd; }

 private:
  int m_fd = -1;
};

}  // namespace saturn::net
