/// \file
/// `os::pipe_stream`: one end of a pipe — a child's stdin, stdout or stderr as the parent
/// sees it — read, written and closed through the ring.
///
/// ```
/// auto kid = saturn::os::command("/bin/cat").std_in(stdio::pipe).std_out(stdio::pipe).spawn();
/// auto written = co_await kid->std_in().write_all("hello");
/// auto closing = kid->std_in().close();            // EOF for the child
/// auto closed = co_await closing;
/// auto text = co_await kid->std_out().read_all();  // "hello", once cat has exited
/// ```
///
/// The descriptor is a plain blocking pipe end opened close-on-exec (so no other child
/// spawned meanwhile, on any thread, inherits it); the ring waits for it to be readable
/// or writable without a thread of its own.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/task.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace saturn::os {

/// An owned pipe end (or nothing: a stream of a child whose stdio was not a pipe, or one
/// already closed). Move-only; the destructor closes it (close(2), never blocks).
///
/// Threading: a value owned by one task at a time; its awaits run from a saturn task on a
/// thread with an event loop, and may move between workers like any await. One read and
/// one write may be in flight at once (from two tasks); the stream must outlive them, and
/// close() must not race them. Cancellation: a stop of the task's token cancels the read
/// or write in flight (std::errc::operation_canceled); bytes a cancelled write_all had
/// written already stay written.
class pipe_stream {
 public:
  pipe_stream() noexcept = default;
  /// Takes ownership of `fd` (-1: no stream).
  explicit pipe_stream(int fd) noexcept : m_fd(fd) {}
  pipe_stream(pipe_stream&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  pipe_stream& operator=(pipe_stream&& o) noexcept;
  pipe_stream(const pipe_stream&) = delete;
  pipe_stream& operator=(const pipe_stream&) = delete;
  ~pipe_stream();

  /// True while the stream holds a descriptor.
  bool is_open() const noexcept { return m_fd >= 0; }
  /// The descriptor (-1 if none); still owned by the stream.
  int fd() const noexcept { return m_fd; }
  /// Gives the descriptor up to the caller (the stream is then empty).
  int release() noexcept {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

  /// Reads up to buf.size() bytes: the count, 0 at EOF (every writer closed — the child
  /// exited or closed its end), or an error naming "read" (EBADF on an empty stream).
  /// Await it as a named lvalue: `auto rd = s.read(b); auto n = co_await rd;`.
  saturn::detail::rw_awaiter read(std::span<std::byte> buf) noexcept { return saturn::read(m_fd, buf); }
  /// Writes up to buf.size() bytes: the count, or an error naming "write". A write after
  /// the child closed its end fails with EPIPE and, like any pipe write, raises SIGPIPE,
  /// which ends a process that does not ignore it: ignore SIGPIPE when a child may exit
  /// before it has read all its input.
  saturn::detail::rw_awaiter write(std::span<const std::byte> buf) noexcept { return saturn::write(m_fd, buf); }
  /// Writes all of `bytes` (several writes if the pipe is full), or the first error.
  task<result<void>> write_all(std::span<const std::byte> bytes);
  /// write_all of a string's bytes; `text` must stay alive until the task ends.
  task<result<void>> write_all(std::string_view text);
  /// Reads until EOF and returns everything read, or the first error.
  task<result<std::string>> read_all();
  /// Closes the descriptor through the ring (IORING_OP_CLOSE): the stream is empty at
  /// once, the descriptor gone when the await ends. Closing a child's stdin is how the
  /// child sees EOF on its input. No read or write may be in flight.
  [[nodiscard]] saturn::detail::close_awaiter close() noexcept { return saturn::close(release()); }

 private:
  int m_fd = -1;
};

}  // namespace saturn::os
