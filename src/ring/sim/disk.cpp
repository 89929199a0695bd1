// The simulated disk's undo log and space accounting (disk.hpp).
#include "ring/sim/disk.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace saturn::ring {

sim_disk::~sim_disk() {
  for (auto& [id, f] : m_files)
    ::close(f.fd);
}

long sim_disk::before_write(int fd, std::uint64_t offset, std::size_t len) {
  m_pending_growth = 0;
  struct ::stat st;
  if (len == 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return static_cast<long>(len);
  if (offset == ~std::uint64_t{0}) {
    const int fl = ::fcntl(fd, F_GETFL);
    const off_t pos = (fl >= 0 && (fl & O_APPEND) != 0) ? st.st_size : ::lseek(fd, 0, SEEK_CUR);
    offset = pos < 0 ? 0 : static_cast<std::uint64_t>(pos);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // Space: only growth counts (an overwrite inside the file needs no new blocks).
  std::uint64_t want = len;
  const std::uint64_t end = offset + want;
  if (end > size) {
    const std::uint64_t growth = end - (offset > size ? offset : size);
    const std::uint64_t left = m_space > m_used ? m_space - m_used : 0;
    if (growth > left) {
      const std::uint64_t cut = growth - left;
      if (cut >= want)
        return -ENOSPC;
      want -= cut;  // a short write up to the last free byte
    }
    const std::uint64_t new_end = offset + want;
    m_pending_growth = new_end > size ? new_end - (offset > size ? offset : size) : 0;
    m_used += m_pending_growth;
  }
  // The undo: the first write since the last sync remembers the durable size, and every
  // write remembers the old bytes it covers inside it.
  auto [it, fresh] = m_files.try_emplace(file_id{st.st_dev, st.st_ino});
  file_log& f = it->second;
  if (fresh) {
    // A descriptor of our own that can read the old bytes and write them back (the
    // program's may be write-only, or append-only): a new open of the same file.
    char proc[40];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    f.fd = ::open(proc, O_RDWR | O_CLOEXEC);
    if (f.fd < 0) {
      m_files.erase(it);
      return static_cast<long>(want);  // cannot reopen it: this file's writes are not undoable
    }
    f.synced_size = size;
  }
  if (offset < f.synced_size) {
    const std::uint64_t stop = offset + want < f.synced_size ? offset + want : f.synced_size;
    std::vector<std::byte> old(stop - offset);
    const ssize_t n = ::pread(f.fd, old.data(), old.size(), static_cast<off_t>(offset));
    old.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (!old.empty())
      f.undo.emplace_back(offset, std::move(old));
  }
  return static_cast<long>(want);
}

void sim_disk::after_write(int, long allowed, long written) noexcept {
  if (m_pending_growth == 0)
    return;
  // A failed or short write grew the file by less than reserved: give the rest back.
  const std::uint64_t unused = written <= 0 ? m_pending_growth
                               : written < allowed ? std::min<std::uint64_t>(m_pending_growth, static_cast<std::uint64_t>(allowed - written))
                                                   : 0;
  m_used -= unused;
  m_pending_growth = 0;
}

bool sim_disk::synced(int fd) noexcept {
  struct ::stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  auto it = m_files.find(file_id{st.st_dev, st.st_ino});
  if (it != m_files.end()) {
    ::close(it->second.fd);
    m_files.erase(it);
  }
  return true;
}

std::size_t sim_disk::crash() noexcept {
  std::size_t changed = 0;
  for (auto& [id, f] : m_files) {
    for (auto u = f.undo.rbegin(); u != f.undo.rend(); ++u)
      (void)::pwrite(f.fd, u->second.data(), u->second.size(), static_cast<off_t>(u->first));
    (void)::ftruncate(f.fd, static_cast<off_t>(f.synced_size));
    ::close(f.fd);
    ++changed;
  }
  m_files.clear();
  return changed;
}

}  // namespace saturn::ring
