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

bool worth_keeping(std::size_t bytes) noexcept { return bytes >= k_min_spare_bytes && bytes <= k_max_spare_bytes; }

}  // namespace

rows::~rows() {
  if (t_spare_gone)
    return;
  // The larger buffer stays; the other is freed with this rows.
  if (worth_keeping(m_data.capacity()) && m_data.capacity() > t_spare.data.capacity())
    m_data.swap(t_spare.data);
  const std::size_t cells_bytes = m_cells.capacity() * sizeof(detail::cell);
  if (worth_keeping(cells_bytes) && m_cells.capacity() > t_spare.cells.capacity())
    m_cells.swap(t_spare.cells);
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
  // The spare takes over only when it holds everything (assign() then never allocates)
  // and is not far bigger than what is needed (a 100 KiB result kept for long must not
  // pin a 32 MiB buffer).
  const auto fits = [](std::size_t need, std::size_t spare_bytes, std::size_t unit) {
    return need * unit >= k_min_spare_bytes && spare_bytes >= need * unit && spare_bytes / k_max_waste <= need * unit;
  };
  const std::size_t data_need = r.m_data.size() + more_data;
  if (data_need > r.m_data.capacity() && fits(data_need, t_spare.data.capacity(), 1)) {
    t_spare.data.assign(r.m_data);
    r.m_data.swap(t_spare.data);
    std::string().swap(t_spare.data);  // the small buffer it outgrew
  }
  const std::size_t cells_need = r.m_cells.size() + more_cells;
  if (cells_need > r.m_cells.capacity() &&
      fits(cells_need, t_spare.cells.capacity() * sizeof(detail::cell), sizeof(detail::cell))) {
    t_spare.cells.assign(r.m_cells.begin(), r.m_cells.end());
    r.m_cells.swap(t_spare.cells);
    std::vector<detail::cell>().swap(t_spare.cells);
  }
}

std::size_t detail::spare_storage_bytes() noexcept {
  if (t_spare_gone)
    return 0;
  // An empty string's capacity is its inline buffer (no heap bytes).
  const std::size_t data = t_spare.data.capacity() > std::string().capacity() ? t_spare.data.capacity() : 0;
  return data + t_spare.cells.capacity() * sizeof(detail::cell);
}

}  // namespace saturn::pg
