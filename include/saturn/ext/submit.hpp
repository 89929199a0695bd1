/// \file
/// The raw ring operations (the implementer part of the loop): read, write, their fixed
/// and vectored forms, kernel timeouts, polls, waitid, cancel, close, linked timeouts and
/// fixed-buffer registration. Socket operations are in saturn/ext/submit_net.hpp, file
/// operations in saturn/ext/submit_fs.hpp.
///
/// Each `submit_*` turns one request into one SQE whose user_data is `op`; it allocates
/// nothing and makes no syscall (the loop's next io_uring_enter submits it), except when
/// the submission queue is full, which it flushes first. The operation completes by a
/// call of `op->m_complete(op, res, flags)` on the loop thread, with `res` >= 0 or -errno.
///
/// Threading, for every function here: call it on `loop`'s own thread only (the ring is
/// SINGLE_ISSUER). None blocks or suspends. Lifetime: the caller owns `op` and every
/// buffer or struct the request names until `op->m_complete` has run, even after a
/// cancel (the kernel may write until the CQE arrives). Cancellation: submit_cancel, or
/// the loop's shutdown (then `res` is -ECANCELED).
///
/// These are free functions over `event_loop&` defined out of line in src/loop, exactly
/// as the member functions they replace were: a call costs what it cost before.
#pragma once

#include <saturn/ext/operation.hpp>

#include <signal.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <system_error>

namespace saturn {

class event_loop;

namespace ext {

/// IORING_OP_NOP; completes with 0.
void submit_nop(event_loop& loop, operation* op);
/// read(2) at `offset` (-1: the file position). Completes with bytes read or -errno.
void submit_read(event_loop& loop, operation* op, int fd, void* buf, unsigned len, std::uint64_t offset);
/// write(2) at `offset` (-1: the file position). Completes with bytes written or -errno.
void submit_write(event_loop& loop, operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset);
/// Read into registered buffer `buf_index` (see register_buffers); `buf` must lie inside it.
void submit_read_fixed(event_loop& loop, operation* op, int fd, void* buf, unsigned len, std::uint64_t offset,
                       unsigned buf_index);
/// Write from registered buffer `buf_index`; `buf` must lie inside it.
void submit_write_fixed(event_loop& loop, operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset,
                        unsigned buf_index);
/// readv(2); `iov` (and the memory it names) must stay alive until completion.
void submit_readv(event_loop& loop, operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset);
/// writev(2); `iov` (and the memory it names) must stay alive until completion.
void submit_writev(event_loop& loop, operation* op, int fd, const ::iovec* iov, unsigned count,
                   std::uint64_t offset);
/// A kernel timeout (IORING_OP_TIMEOUT). `ts` must stay alive until completion.
/// Completes with -ETIME on expiry (normal), -ECANCELED when cancelled.
void submit_timeout(event_loop& loop, operation* op, const kernel_timespec* ts, bool absolute = false);
/// A one-shot IORING_OP_POLL_ADD: completes with the ready events (a POLLIN/POLLOUT/...
/// mask, POLLHUP and POLLERR included whatever `events` asks) once `fd` has one of
/// `events`, or -errno. For descriptors whose own library reads them (c-ares's sockets)
/// and for pidfds (POLLIN: the child exited).
void submit_poll(event_loop& loop, operation* op, int fd, unsigned events);
/// waitid(2) as a ring operation (IORING_OP_WAITID, Linux >= 6.7; see supports_waitid):
/// completes with 0 once a child matching `idtype`/`id` (P_PIDFD and a pidfd, P_PID, ...)
/// has changed state per `options` (WEXITED, ...; WNOHANG makes it return at once), with
/// `*info` filled in as waitid(2) fills it — the child is reaped unless WNOWAIT — or
/// -errno (-ECHILD: no such child of this process, -ECANCELED). `info` must stay alive
/// until completion. A kernel without the opcode completes it with -EINVAL.
void submit_waitid(event_loop& loop, operation* op, int idtype, int id, ::siginfo_t* info, int options);
/// close(2) of `fd` through the ring (IORING_OP_CLOSE). Completes with 0 or -errno.
void submit_close(event_loop& loop, operation* op, int fd);
/// IORING_OP_ASYNC_CANCEL of `target`. `op` (may be null: result ignored) completes with
/// 0 (target cancelled: it completes with -ECANCELED), -ENOENT (target already completed
/// or unknown) or -EALREADY (target is running and may still complete normally).
void submit_cancel(event_loop& loop, const operation* target, operation* op = nullptr);
/// Links a timeout to the operation submitted just before (IOSQE_IO_LINK +
/// IORING_OP_LINK_TIMEOUT): if it has not completed by `ts`, it is cancelled (its result
/// is -ECANCELED). `op` (may be null) completes with -ETIME if the timeout fired, else
/// -ECANCELED. Must directly follow a submit_* call on the same loop; `ts` must stay
/// alive until both complete.
void link_timeout(event_loop& loop, const kernel_timespec* ts, operation* op = nullptr);

/// True when the kernel implements `opcode` (probed when the ring was set up). Loop
/// thread only; does not block.
bool supports_opcode(const event_loop& loop, int opcode) noexcept;
/// True when the ring has IORING_OP_WAITID (probed at setup). As supports_opcode.
bool supports_waitid(const event_loop& loop) noexcept;

/// Registers fixed buffers for the *_fixed operations (replaces any previous set): an
/// error code when the kernel refuses (a registration is a syscall). No fixed operation
/// may be in flight.
std::error_code register_buffers(event_loop& loop, std::span<const ::iovec> buffers);
/// Unregisters the fixed buffers. No fixed operation may be in flight.
void unregister_buffers(event_loop& loop) noexcept;

}  // namespace ext
}  // namespace saturn
