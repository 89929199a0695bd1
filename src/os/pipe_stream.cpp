// os::pipe_stream: a pipe end read and written through the ring. read_all grows a string
// by 64 KiB at a time and reads straight into its tail, so a child's output is copied
// once (kernel to string).
#include <saturn/os/pipe_stream.hpp>

#include <unistd.h>

#include <cstddef>

namespace saturn::os {

pipe_stream& pipe_stream::operator=(pipe_stream&& o) noexcept {
  if (this != &o) {
    if (m_fd >= 0)
      ::close(m_fd);
    m_fd = o.m_fd;
    o.m_fd = -1;
  }
  return *this;
}

pipe_stream::~pipe_stream() {
  if (m_fd >= 0)
    ::close(m_fd);
}

task<result<void>> pipe_stream::write_all(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    auto wr = saturn::write(m_fd, bytes);
    auto n = co_await wr;
    if (!n)
      co_return n.err();
    bytes = bytes.subspan(*n);
  }
  co_return result<void>{};
}

task<result<void>> pipe_stream::write_all(std::string_view text) {
  co_return co_await write_all(std::as_bytes(std::span(text.data(), text.size())));
}

task<result<std::string>> pipe_stream::read_all() {
  constexpr std::size_t chunk = 64 * 1024;
  std::string out;
  for (;;) {
    const std::size_t have = out.size();
    out.resize(have + chunk);
    auto rd = saturn::read(m_fd, std::as_writable_bytes(std::span(out.data() + have, chunk)));
    auto n = co_await rd;
    if (!n)
      co_return n.err();
    out.resize(have + *n);
    if (*n == 0)
      co_return out;
  }
}

}  // namespace saturn::os
