/// \file
/// The raw socket operations on the ring (the implementer part of the loop, used by
/// saturn/net, tls and the protocols above them): socket, accept, connect, recv (into a
/// buffer or a provided-buffer ring), send, zero-copy send, sendmsg/recvmsg, shutdown.
///
/// Threading, lifetime and cost as in saturn/ext/submit.hpp: call on `loop`'s own thread;
/// none blocks or suspends; `op` and everything the request names stay alive until
/// `op->m_complete` has run.
#pragma once

#include <saturn/ext/operation.hpp>

#include <sys/socket.h>

#include <cstdint>

namespace saturn {

class event_loop;

namespace ext {

/// socket(2). Completes with the new fd or -errno.
void submit_socket(event_loop& loop, operation* op, int domain, int type, int protocol);
/// accept4(2) on listening socket `fd` (`addr`/`len` may be null). With `multishot` the
/// operation stays armed: one CQE per accepted fd while IORING_CQE_F_MORE is set; an
/// error ends it (the final CQE lacks F_MORE).
void submit_accept(event_loop& loop, operation* op, int fd, ::sockaddr* addr, ::socklen_t* len, int flags,
                   bool multishot);
/// connect(2); `addr` must stay alive until completion. Completes with 0 or -errno.
void submit_connect(event_loop& loop, operation* op, int fd, const ::sockaddr* addr, ::socklen_t len);
/// recv(2) into `buf`. Completes with the byte count (0: EOF) or -errno.
void submit_recv(event_loop& loop, operation* op, int fd, void* buf, unsigned len, int flags);
/// recv(2) into a buffer the kernel picks from buf_ring group `group` (saturn/ext/buf_ring.hpp):
/// the CQE carries IORING_CQE_F_BUFFER and the buffer id (flags >> cqe_buffer_shift). With
/// `multishot` one CQE per arrival while F_MORE is set; -ENOBUFS (ring empty) ends it.
/// `poll_first` waits for data before picking a buffer (use when re-arming after -ENOBUFS).
void submit_recv_provided(event_loop& loop, operation* op, int fd, std::uint16_t group, bool multishot,
                          bool poll_first);
/// send(2) of `buf`. Completes with the byte count or -errno (MSG_NOSIGNAL is added).
void submit_send(event_loop& loop, operation* op, int fd, const void* buf, unsigned len, int flags);
/// Zero-copy send (IORING_OP_SEND_ZC): a first CQE with the byte count and F_MORE, then a
/// notification CQE (cqe_f_notif) once the kernel no longer reads `buf`.
void submit_send_zc(event_loop& loop, operation* op, int fd, const void* buf, unsigned len, int flags);
/// sendmsg(2); `msg` and everything it points at must stay alive until completion
/// (MSG_NOSIGNAL is added).
void submit_sendmsg(event_loop& loop, operation* op, int fd, const ::msghdr* msg, int flags);
/// recvmsg(2); `msg` and everything it points at must stay alive until completion.
void submit_recvmsg(event_loop& loop, operation* op, int fd, ::msghdr* msg, int flags);
/// shutdown(2). Completes with 0 or -errno.
void submit_shutdown(event_loop& loop, operation* op, int fd, int how);

}  // namespace ext
}  // namespace saturn
