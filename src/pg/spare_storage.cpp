// Per-thread spare storage for pg::rows (include/saturn/pg/rows.hpp).
//
// Why: a result's two buffers (the DataRow bodies and the cell positions) grow by
// doubling to tens of MiB for a large result. glibc serves blocks that big with mmap and
// unmaps them on free (or trims its heap), so every fetch of 100,000 rows faulted ~26 MB
// in again: ~6,500 page faults per fetch, most of the client's system time and the
// copies of each doubling. Kept on the thread that freed them, the next result on that
// thread starts at full size: measured on fetch_100k, the faults per fetch went from
// ~6,500 to ~0 (see docs/benchmarks.md, pg).
#include <saturn/pg/rows.hpp>

#include <string>
#include <utility>
#include <vector>

namespace saturn::pg {

namespace {

// Smaller buffers come cheaply from malloc's free lists anyway; larger ones are let go,
// so a thread never holds more than 2 x 32 MiB for a result it no longer has.
constexpr std::size_t k_min_spare_bytes = 64 * 1024;
constexpr std::size_t k_max_spare_bytes = 32 * 1024 * 1024;
// A result moves into a spare at most this many times the size it needs.
constexpr std::size_t k_max_waste = 8;

struct spare {
  std::string data;
  std::vector<detail::cell> cells;
  ~spare();
};

// Set once this thread's spare is destroyed (thread exit): a rows destroyed later, by
// another thread_local's destructor, frees its storage as usual. Trivially destructible,
// so it outlives `t_spare`.
thread_local bool t_spare_gone = false;
thread_local spare t_spare;

spare::~spare() { t_spare_gone = true; }

template <class Buffer>
std::size_t bytes_of(std::size_t elements) noexcept {
  return elements * sizeof(typename Buffer::value_type);
}

// On a rows' destruction: its buffer becomes the spare if it is worth keeping and larger
// than the spare (the other one is freed with the rows).
template <class Buffer>
void keep(Buffer& mine, Buffer& spare) noexcept {
  const std::size_t bytes = bytes_of<Buffer>(mine.capacity());
  if (bytes >= k_min_spare_bytes && bytes <= k_max_spare_bytes && mine.capacity() > spare.capacity())
    mine.swap(spare);
}

// Before `mine` grows to `need` elements: it moves into the spare when the spare holds
// them all (assign() then never allocates) and is not far bigger than needed (a 100 KiB
// result kept for long must not pin a 32 MiB buffer).
template <class Buffer>
void grow_into(Buffer& mine, Buffer& spare, std::size_t need) noexcept {
  const std::size_t need_bytes = bytes_of<Buffer>(need);
  const std::size_t spare_bytes = bytes_of<Buffer>(spare.capacity());
  if (need <= mine.capacity() || need_bytes < k_min_spare_bytes || spare_bytes < need_bytes ||
      spare_bytes / k_max_waste > need_bytes)
    return;
  spare.assign(mine.begin(), mine.end());
  mine.swap(spare);
  Buffer().swap(spare);  // the small buffer it outgrew
}

}  // namespace

rows::~rows() {
  if (t_spare_gone)
    return;
  keep(m_data, t_spare.data);
  keep(m_cells, t_spare.cells);
}

void release_spare_storage() noexcept {
  if (t_spare_gone)
    return;
  std::string().swap(t_spare.data);
  std::vector<detail::cell>().swap(t_spare.cells);
}

void detail::grow_into_spare(rows& r, std::size_t more_data, std::size_t more_cells) noexcept {
  if (t_spare_gone)
    return;
  grow_into(r.m_data, t_spare.data, r.m_data.size() + more_data);
  grow_into(r.m_cells, t_spare.cells, r.m_cells.size() + more_cells);
}

std::size_t detail::spare_storage_bytes() noexcept {
  if (t_spare_gone)
    return 0;
  // An empty string's capacity is its inline buffer (no heap bytes).
  const std::size_t data = t_spare.data.capacity() > std::string().capacity() ? t_spare.data.capacity() : 0;
  return data + t_spare.cells.capacity() * sizeof(detail::cell);
}

}  // namespace saturn::pg
