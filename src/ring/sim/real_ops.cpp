// The simulated kernel's operations on real descriptors (files, sockets, pipes, eventfds):
// each is performed, non-blocking, at the moment the simulation picks, and parked while it
// would block (one poll() over every parked descriptor tells when to try again). See
// include/saturn/sim/world.hpp.
#include "ring/sim/kernel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "ring/ring.hpp"

namespace saturn::ring {
namespace {

/// The readiness an op waits for before its syscall can go without blocking (0: none).
short wanted_events(const io_uring_sqe& sqe) noexcept {
  switch (sqe.opcode) {
    case IORING_OP_READ: case IORING_OP_READV: case IORING_OP_READ_FIXED: case IORING_OP_RECV:
    case IORING_OP_RECVMSG: case IORING_OP_ACCEPT:
      return POLLIN;
    case IORING_OP_WRITE: case IORING_OP_WRITEV: case IORING_OP_WRITE_FIXED: case IORING_OP_SEND:
    case IORING_OP_SENDMSG: case IORING_OP_SEND_ZC: case IORING_OP_CONNECT:
      return POLLOUT;
    case IORING_OP_POLL_ADD:
      return static_cast<short>(sqe.poll32_events);
    default:
      return 0;
  }
}

bool ready_now(int fd, short events) noexcept {
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (events | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

int result_of(long r) noexcept { return r < 0 ? -errno : static_cast<int>(r); }

constexpr std::uint64_t k_no_offset = ~std::uint64_t{0};

bool is_socket_op(std::uint8_t opcode) noexcept {
  switch (opcode) {
    case IORING_OP_RECV: case IORING_OP_RECVMSG: case IORING_OP_SEND: case IORING_OP_SEND_ZC:
    case IORING_OP_SENDMSG: case IORING_OP_ACCEPT: case IORING_OP_CONNECT: case IORING_OP_READ:
    case IORING_OP_READV: case IORING_OP_WRITE: case IORING_OP_WRITEV: case IORING_OP_POLL_ADD:
      return true;
    default:
      return false;
  }
}

}  // namespace

void sim_kernel::set_net_rule(std::uint16_t port, net_rule r) {
  if (r == net_rule::open)
    m_net.erase(port);
  else
    m_net[port] = r;
  if (r != net_rule::reset)
    return;  // a healed op goes on when its descriptor polls ready; a cut one waits anyway
  // A reset reaches operations already waiting on an idle connection too.
  for (std::uint64_t id : std::vector<std::uint64_t>(m_parked)) {
    auto it = m_ops.find(id);
    if (it == m_ops.end() || !it->second->parked || it->second->st != sim_op::state::waiting)
      continue;
    sim_op* op = it->second.get();
    if (net_rule_for(op) == net_rule::reset && perform(op))
      op->parked = false;
  }
}

sim_kernel::net_rule sim_kernel::net_rule_for(const sim_op* op) const noexcept {
  const io_uring_sqe& sqe = op->sqe();
  if (m_net.empty() || !is_socket_op(sqe.opcode))
    return net_rule::open;
  auto rule = [&](std::uint16_t port) {
    auto it = m_net.find(port);
    return port == 0 || it == m_net.end() ? net_rule::open : it->second;
  };
  if (sqe.opcode == IORING_OP_CONNECT) {
    ::sockaddr_storage a{};
    const auto* target = reinterpret_cast<const ::sockaddr*>(sqe.addr);
    std::memcpy(&a, target, std::min<std::size_t>(sizeof a, static_cast<std::size_t>(sqe.off)));
    if (net_rule r = rule(port_of(a)); r != net_rule::open)
      return r;
  }
  std::uint16_t local = 0, peer = 0;
  if (!socket_ports(op->fd(), local, peer))
    return net_rule::open;  // not a socket
  if (net_rule r = rule(local); r != net_rule::open)
    return r;
  return rule(peer);
}

void sim_kernel::start_real(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  op->multishot = (sqe.opcode == IORING_OP_ACCEPT && (sqe.ioprio & IORING_ACCEPT_MULTISHOT) != 0) ||
                  (sqe.opcode == IORING_OP_RECV && (sqe.ioprio & IORING_RECV_MULTISHOT) != 0);
  op->park_events = wanted_events(sqe);
  if (sqe.opcode == IORING_OP_ACCEPT)
    note_listener(sqe.fd);  // one made without net::tcp_listener (sim_note_listener)
  if (!perform(op))
    park(op);
}

bool sim_kernel::perform(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  const int fd = op->fd();  // the pinned file while parked
  void* const addr = reinterpret_cast<void*>(sqe.addr);
  // The network's rules first: a cut connection moves nothing, a reset one fails. An
  // in-world connection whose peer reset it (SO_LINGER 0, or a listener that closed
  // before accepting it) fails as TCP's does after an RST.
  net_rule rule = net_rule_for(op);
  if (rule == net_rule::open && is_socket_op(sqe.opcode) && world_reset(fd))
    rule = net_rule::reset;
  switch (rule) {
    case net_rule::open:
      break;
    case net_rule::cut:
      return false;  // stays parked until world::heal
    case net_rule::reset:
      if (sqe.opcode == IORING_OP_CONNECT)
        schedule(op, -ECONNREFUSED);
      else if (sqe.opcode == IORING_OP_POLL_ADD)
        schedule(op, POLLERR | POLLHUP);
      else
        schedule(op, -ECONNRESET);
      return true;
  }
  // Descriptors that may block are asked first (regular files are always ready).
  if (op->park_events != 0 && sqe.opcode != IORING_OP_CONNECT && !ready_now(fd, op->park_events) &&
      !(sqe.opcode == IORING_OP_ACCEPT && accept_ready(fd)))
    return false;
  int res = 0;
  unsigned flags = 0;
  switch (sqe.opcode) {
    case IORING_OP_READ: case IORING_OP_READ_FIXED:
      res = result_of(sqe.off == k_no_offset ? ::read(fd, addr, sqe.len)
                                             : ::pread(fd, addr, sqe.len, static_cast<off_t>(sqe.off)));
      break;
    case IORING_OP_WRITE: case IORING_OP_WRITE_FIXED: {
      // The disk model first: it may shorten the write (a full disk) and keeps its undo.
      const long allowed = m_disk.before_write(fd, sqe.off, sqe.len);
      if (allowed < 0) {
        res = static_cast<int>(allowed);
        break;
      }
      const auto n = static_cast<std::size_t>(allowed);
      res = result_of(sqe.off == k_no_offset ? ::write(fd, addr, n) : ::pwrite(fd, addr, n, static_cast<off_t>(sqe.off)));
      m_disk.after_write(fd, allowed, res);
      break;
    }
    case IORING_OP_READV: {
      const auto* iov = static_cast<const ::iovec*>(addr);
      const int n = static_cast<int>(sqe.len);
      res = result_of(sqe.off == k_no_offset ? ::readv(fd, iov, n) : ::preadv(fd, iov, n, static_cast<off_t>(sqe.off)));
      break;
    }
    case IORING_OP_WRITEV: {
      const auto* iov = static_cast<const ::iovec*>(addr);
      int n = static_cast<int>(sqe.len);
      std::size_t total = 0;
      for (int i = 0; i < n; ++i)
        total += iov[i].iov_len;
      const long allowed = m_disk.before_write(fd, sqe.off, total);
      if (allowed < 0) {
        res = static_cast<int>(allowed);
        break;
      }
      // A shortened write: the vector cut at `allowed` bytes.
      std::vector<::iovec> cut;
      if (static_cast<std::size_t>(allowed) < total) {
        std::size_t left = static_cast<std::size_t>(allowed);
        for (int i = 0; i < n && left > 0; ++i) {
          cut.push_back(iov[i]);
          cut.back().iov_len = std::min(left, iov[i].iov_len);
          left -= cut.back().iov_len;
        }
        iov = cut.data();
        n = static_cast<int>(cut.size());
      }
      res = result_of(sqe.off == k_no_offset ? ::writev(fd, iov, n) : ::pwritev(fd, iov, n, static_cast<off_t>(sqe.off)));
      m_disk.after_write(fd, allowed, res);
      break;
    }
    case IORING_OP_RECV: {
      const int mflags = static_cast<int>(sqe.msg_flags) | MSG_DONTWAIT;
      if ((sqe.flags & IOSQE_BUFFER_SELECT) != 0) {
        picked_buffer b;
        if (!pick_buffer(op->ring, sqe.buf_group, b)) {
          res = -ENOBUFS;
          break;
        }
        const unsigned len = sqe.len != 0 && sqe.len < b.len ? sqe.len : b.len;
        res = result_of(::recv(fd, b.addr, len, mflags));
        if (res == -EAGAIN) {
          --op->ring->m_groups[sqe.buf_group].head;  // not consumed: the buffer goes back
          return false;
        }
        if (res >= 0)
          flags = IORING_CQE_F_BUFFER | (static_cast<unsigned>(b.bid) << IORING_CQE_BUFFER_SHIFT);
        else
          --op->ring->m_groups[sqe.buf_group].head;
      } else {
        res = result_of(::recv(fd, addr, sqe.len, mflags));
      }
      if (op->multishot && res > 0)
        flags |= IORING_CQE_F_MORE;
      break;
    }
    case IORING_OP_RECVMSG:
      if ((sqe.flags & IOSQE_BUFFER_SELECT) != 0) {
        res = -EINVAL;  // not simulated: saturn does not use it
        break;
      }
      res = result_of(::recvmsg(fd, static_cast<::msghdr*>(addr), static_cast<int>(sqe.msg_flags) | MSG_DONTWAIT));
      break;
    case IORING_OP_SEND: case IORING_OP_SEND_ZC:
      res = result_of(::send(fd, addr, sqe.len, static_cast<int>(sqe.msg_flags) | MSG_DONTWAIT | MSG_NOSIGNAL));
      break;
    case IORING_OP_SENDMSG:
      res = result_of(::sendmsg(fd, static_cast<const ::msghdr*>(addr),
                                static_cast<int>(sqe.msg_flags) | MSG_DONTWAIT | MSG_NOSIGNAL));
      break;
    case IORING_OP_ACCEPT: {
      auto* len = reinterpret_cast<::socklen_t*>(sqe.addr2);
      if (!accept_in_world(op, res))
        res = result_of(::accept4(fd, static_cast<::sockaddr*>(addr), len, static_cast<int>(sqe.accept_flags)));
      if (op->multishot && res >= 0)
        flags |= IORING_CQE_F_MORE;
      break;
    }
    case IORING_OP_CONNECT:
      if (!op->connecting && connect_in_world(op)) {
        res = 0;  // to one of the program's listeners: an in-world connection (net.cpp)
      } else if (!op->connecting) {
        const int fl = ::fcntl(fd, F_GETFL);
        if (fl >= 0 && (fl & O_NONBLOCK) == 0)
          ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        res = result_of(::connect(fd, static_cast<const ::sockaddr*>(addr), static_cast<::socklen_t>(sqe.off)));
        if (fl >= 0 && (fl & O_NONBLOCK) == 0)
          ::fcntl(fd, F_SETFL, fl);
        if (res == -EINPROGRESS) {
          op->connecting = true;
          return false;
        }
      } else {
        if (!ready_now(fd, POLLOUT))
          return false;
        int err = 0;
        ::socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        res = -err;
      }
      break;
    case IORING_OP_POLL_ADD: {
      pollfd p{fd, static_cast<short>(sqe.poll32_events), 0};
      ::poll(&p, 1, 0);
      res = p.revents;
      break;
    }
    case IORING_OP_OPENAT:
      res = result_of(::openat(fd, static_cast<const char*>(addr), static_cast<int>(sqe.open_flags), sqe.len));
      break;
    case IORING_OP_OPENAT2:
      res = result_of(::syscall(SYS_openat2, fd, addr, reinterpret_cast<void*>(sqe.addr2), sqe.len));
      break;
    case IORING_OP_STATX:
      res = result_of(::statx(fd, static_cast<const char*>(addr), static_cast<int>(sqe.statx_flags), sqe.len,
                              reinterpret_cast<struct ::statx*>(sqe.addr2)));
      break;
    case IORING_OP_FSYNC:
      // A regular file's durability is the disk model's (world::crash): no real sync,
      // which would cost milliseconds of real time per call and prove nothing here.
      res = m_disk.synced(fd) ? 0
                              : result_of((sqe.fsync_flags & IORING_FSYNC_DATASYNC) != 0 ? ::fdatasync(fd) : ::fsync(fd));
      break;
    case IORING_OP_CLOSE:
      note_world_close(fd);
      res = result_of(::close(fd));
      break;
    case IORING_OP_SHUTDOWN:
      res = result_of(::shutdown(fd, static_cast<int>(sqe.len)));
      break;
    case IORING_OP_SOCKET:
      res = result_of(::socket(fd, static_cast<int>(sqe.off), static_cast<int>(sqe.len)));
      break;
    case op_waitid: {
      auto* info = reinterpret_cast<::siginfo_t*>(sqe.addr2);
      const int options = static_cast<int>(sqe.file_index);
      info->si_pid = 0;
      res = result_of(::waitid(static_cast<idtype_t>(sqe.len), static_cast<id_t>(fd), info, options | WNOHANG));
      if (res == 0 && info->si_pid == 0 && (options & WNOHANG) == 0)
        return false;  // nothing changed yet: try again later
      break;
    }
    default:
      res = -EINVAL;  // an opcode the simulation does not implement
  }
  if (res == -EAGAIN && op->park_events != 0)
    return false;
  schedule(op, res, flags);
  return true;
}

int sim_kernel::poll_parked(int timeout_ms) {
  reap_accept_queues();
  // Drop ids of ops that completed or were cancelled meanwhile.
  std::vector<sim_op*> ops;
  std::size_t keep = 0;
  for (std::uint64_t id : m_parked) {
    auto it = m_ops.find(id);
    if (it == m_ops.end() || !it->second->parked || it->second->st != sim_op::state::waiting)
      continue;
    m_parked[keep++] = id;
    ops.push_back(it->second.get());
  }
  m_parked.resize(keep);
  if (ops.empty())
    return 0;
  std::vector<pollfd> fds;
  fds.reserve(ops.size());
  bool always = false;  // an op with no descriptor to poll (waitid) is tried every time
  for (sim_op* op : ops) {
    // An accept with an in-world connection queued is ready whatever its listener polls.
    const bool pollable = (op->park_events != 0 || op->connecting) &&
                          !(op->sqe().opcode == IORING_OP_ACCEPT && accept_ready(op->fd()));
    fds.push_back(pollfd{pollable ? op->fd() : -1, op->connecting ? static_cast<short>(POLLOUT) : op->park_events, 0});
    always = always || !pollable;
  }
  const int n = ::poll(fds.data(), fds.size(), always ? 0 : timeout_ms);
  if (n <= 0 && !always)
    return 0;
  // The ready ones are performed in a seed-chosen order.
  std::vector<sim_op*> ready;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (fds[i].fd < 0 || fds[i].revents != 0)
      ready.push_back(ops[i]);
  for (std::size_t i = ready.size(); i > 1; --i)
    std::swap(ready[i - 1], ready[m_rng.below(i)]);
  int progressed = 0;
  for (sim_op* op : ready) {
    if (m_ops.count(op->id) == 0 || op->st != sim_op::state::waiting)
      continue;
    if (perform(op)) {
      op->parked = false;
      ++progressed;
    }
  }
  if (progressed > 0) {
    std::size_t k = 0;
    for (std::uint64_t id : m_parked) {
      auto it = m_ops.find(id);
      if (it != m_ops.end() && it->second->parked && it->second->st == sim_op::state::waiting)
        m_parked[k++] = id;
    }
    m_parked.resize(k);
  }
  return progressed;
}

}  // namespace saturn::ring
