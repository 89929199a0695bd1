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
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

void sim_kernel::start_real(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  op->multishot = (sqe.opcode == IORING_OP_ACCEPT && (sqe.ioprio & IORING_ACCEPT_MULTISHOT) != 0) ||
                  (sqe.opcode == IORING_OP_RECV && (sqe.ioprio & IORING_RECV_MULTISHOT) != 0);
  op->park_events = wanted_events(sqe);
  if (!perform(op))
    park(op);
}

bool sim_kernel::perform(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  const int fd = op->fd();  // the pinned file while parked
  void* const addr = reinterpret_cast<void*>(sqe.addr);
  // Descriptors that may block are asked first (regular files are always ready).
  if (op->park_events != 0 && sqe.opcode != IORING_OP_CONNECT && !ready_now(fd, op->park_events))
    return false;
  int res = 0;
  unsigned flags = 0;
  switch (sqe.opcode) {
    case IORING_OP_READ: case IORING_OP_READ_FIXED:
      res = result_of(sqe.off == k_no_offset ? ::read(fd, addr, sqe.len)
                                             : ::pread(fd, addr, sqe.len, static_cast<off_t>(sqe.off)));
      break;
    case IORING_OP_WRITE: case IORING_OP_WRITE_FIXED:
      res = result_of(sqe.off == k_no_offset ? ::write(fd, addr, sqe.len)
                                             : ::pwrite(fd, addr, sqe.len, static_cast<off_t>(sqe.off)));
      break;
    case IORING_OP_READV: {
      const auto* iov = static_cast<const ::iovec*>(addr);
      const int n = static_cast<int>(sqe.len);
      res = result_of(sqe.off == k_no_offset ? ::readv(fd, iov, n) : ::preadv(fd, iov, n, static_cast<off_t>(sqe.off)));
      break;
    }
    case IORING_OP_WRITEV: {
      const auto* iov = static_cast<const ::iovec*>(addr);
      const int n = static_cast<int>(sqe.len);
      res = result_of(sqe.off == k_no_offset ? ::writev(fd, iov, n) : ::pwritev(fd, iov, n, static_cast<off_t>(sqe.off)));
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
      res = result_of(::accept4(fd, static_cast<::sockaddr*>(addr), len, static_cast<int>(sqe.accept_flags)));
      if (op->multishot && res >= 0)
        flags |= IORING_CQE_F_MORE;
      break;
    }
    case IORING_OP_CONNECT:
      if (!op->connecting) {
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
      res = result_of((sqe.fsync_flags & IORING_FSYNC_DATASYNC) != 0 ? ::fdatasync(fd) : ::fsync(fd));
      break;
    case IORING_OP_CLOSE:
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
    const bool pollable = op->park_events != 0 || op->connecting;
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
