// read_file / write_file: loops over short transfers on top of fs::file.
#include <saturn/fs/file.hpp>
#include <saturn/fs/whole_file.hpp>

#include <algorithm>

namespace saturn::fs {

namespace {
// One ring operation moves at most this much (the kernel caps a transfer near 2 GiB).
constexpr std::size_t k_max_chunk = std::size_t{64} << 20;
constexpr std::size_t k_min_capacity = 16 * 1024;
}  // namespace

task<fs_result<std::vector<std::byte>>> read_file(std::string path) {
  fs_result<file> opened = co_await file::open(std::move(path), O_RDONLY);
  if (!opened)
    co_return opened.err();
  file& f = *opened;
  auto st_aw = f.stat(STATX_SIZE);
  fs_result<struct ::statx> st = co_await st_aw;
  if (!st)
    co_return st.err();
  std::vector<std::byte> data;
  // A size of 0 is common for files whose size is unknown (procfs): start small and grow.
  data.resize(std::max<std::size_t>(static_cast<std::size_t>(st->stx_size) + 1, k_min_capacity));
  std::size_t have = 0;
  for (;;) {
    if (have == data.size())
      data.resize(data.size() * 2);
    const std::size_t want = std::min(data.size() - have, k_max_chunk);
    auto aw = f.read_at(std::span<std::byte>(data.data() + have, want), have);
    fs_result<std::size_t> n = co_await aw;
    if (!n)
      co_return n.err();
    if (*n == 0)
      break;
    have += *n;
  }
  data.resize(have);
  fs_result<void> closed = co_await f.close();
  if (!closed)
    co_return closed.err();
  co_return data;
}

task<fs_result<void>> write_file(std::string path, std::span<const std::byte> data, unsigned mode, bool sync) {
  fs_result<file> opened = co_await file::open(std::move(path), O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (!opened)
    co_return opened.err();
  file& f = *opened;
  std::size_t done = 0;
  while (done < data.size()) {
    const std::size_t want = std::min(data.size() - done, k_max_chunk);
    auto aw = f.write_at(data.subspan(done, want), done);
    fs_result<std::size_t> n = co_await aw;
    if (!n)
      co_return n.err();
    if (*n == 0)  // no progress and no error: do not spin
      co_return fs_error{std::make_error_code(std::errc::io_error), "write", f.path()};
    done += *n;
  }
  if (sync) {
    auto aw = f.datasync();
    fs_result<void> r = co_await aw;
    if (!r)
      co_return r.err();
  }
  co_return co_await f.close();
}

}  // namespace saturn::fs
