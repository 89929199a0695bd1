// The per-thread cells (include/saturn/metrics/detail/cells.hpp): the shard list, the
// retired totals of exited threads, and the readers' sums. One mutex guards the list, the
// retired totals and the allocation of ids; writers never take it after their first
// touch of a chunk.
#include <saturn/metrics/detail/cells.hpp>

#include <bit>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace saturn::metrics::detail {

constinit thread_local shard* t_shard = nullptr;

namespace {

struct cell_table {
  std::mutex mutex;
  std::vector<shard*> shards;          // live threads' shards
  std::vector<std::uint64_t> retired;  // exited threads' totals, by id (doubles as bits)
  std::vector<bool> is_double;         // by id
  std::uint32_t next = 0;
};

cell_table& table() {
  static cell_table* t = new cell_table;  // lifetime: never destroyed (threads exit after statics)
  return *t;
}

void retire(shard* s) noexcept {
  cell_table& t = table();
  std::lock_guard lock(t.mutex);
  for (std::uint32_t k = 0; k < max_chunks; ++k) {
    cell* c = s->chunks[k].load(std::memory_order_relaxed);
    if (c == nullptr)
      continue;
    for (std::uint32_t i = 0; i < cells_per_chunk; ++i) {
      const std::uint32_t id = k * cells_per_chunk + i;
      if (id >= t.next)
        break;
      const std::uint64_t v = c[i].load(std::memory_order_relaxed);
      if (t.is_double[id])
        t.retired[id] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(t.retired[id]) + std::bit_cast<double>(v));
      else
        t.retired[id] += v;
    }
    delete[] c;
  }
  std::erase(t.shards, s);
  delete s;
}

/// Folds the thread's shard into the retired totals when the thread exits.
struct shard_guard {
  shard* s = nullptr;
  ~shard_guard() {
    if (s != nullptr) {
      t_shard = nullptr;
      retire(s);
    }
  }
};
thread_local shard_guard t_guard;

}  // namespace

cell* cell_slow(std::uint32_t id) {
  cell_table& t = table();
  shard* s = t_shard;
  if (s == nullptr) {
    s = new shard{};
    {
      std::lock_guard lock(t.mutex);
      t.shards.push_back(s);
    }
    t_shard = s;
    t_guard.s = s;
  }
  const std::uint32_t k = id / cells_per_chunk;
  cell* c = s->chunks[k].load(std::memory_order_relaxed);
  if (c == nullptr) {
    c = new cell[cells_per_chunk];
    for (std::uint32_t i = 0; i < cells_per_chunk; ++i)
      c[i].store(0, std::memory_order_relaxed);
    // ordering: release; a reader that sees the chunk sees its zeroed cells.
    s->chunks[k].store(c, std::memory_order_release);
  }
  return &c[id % cells_per_chunk];
}

void cell_add_double(cell& c, double v) noexcept {
  const double now = std::bit_cast<double>(c.load(std::memory_order_relaxed));
  c.store(std::bit_cast<std::uint64_t>(now + v), std::memory_order_relaxed);
}

std::uint32_t allocate_cells(std::uint32_t n, std::uint32_t doubles_from) {
  cell_table& t = table();
  std::lock_guard lock(t.mutex);
  if (n == 0 || n > cells_per_chunk)
    throw std::length_error("saturn::metrics: a metric needs 1 to 512 cells (a histogram at most 510 buckets)");
  std::uint32_t first = t.next;
  if (first / cells_per_chunk != (first + n - 1) / cells_per_chunk)
    first = (first / cells_per_chunk + 1) * cells_per_chunk;  // keep it within one chunk
  if (std::uint64_t{first} + n > std::uint64_t{max_chunks} * cells_per_chunk)
    throw std::length_error("saturn::metrics: out of metric cells (262,144 in a process): too many metrics registered");
  t.next = first + n;
  t.retired.resize(t.next, 0);
  t.is_double.resize(t.next, false);
  for (std::uint32_t i = 0; i < n; ++i)
    t.is_double[first + i] = i >= doubles_from;
  return first;
}

void sum_cells(std::uint32_t first, std::uint32_t n, std::uint64_t* out) {
  cell_table& t = table();
  std::lock_guard lock(t.mutex);
  const std::uint32_t k = first / cells_per_chunk, off = first % cells_per_chunk;
  for (std::uint32_t i = 0; i < n; ++i)
    out[i] = first + i < t.retired.size() ? t.retired[first + i] : 0;
  for (shard* s : t.shards) {
    // ordering: acquire pairs with cell_slow's release of the chunk.
    cell* c = s->chunks[k].load(std::memory_order_acquire);
    if (c == nullptr)
      continue;
    for (std::uint32_t i = 0; i < n; ++i)
      out[i] += c[off + i].load(std::memory_order_relaxed);
  }
}

std::uint64_t sum_cell(std::uint32_t id) {
  std::uint64_t v = 0;
  sum_cells(id, 1, &v);
  return v;
}

double sum_double_cell(std::uint32_t id) {
  cell_table& t = table();
  std::lock_guard lock(t.mutex);
  double v = id < t.retired.size() ? std::bit_cast<double>(t.retired[id]) : 0.0;
  for (shard* s : t.shards) {
    cell* c = s->chunks[id / cells_per_chunk].load(std::memory_order_acquire);
    if (c != nullptr)
      v += std::bit_cast<double>(c[id % cells_per_chunk].load(std::memory_order_relaxed));
  }
  return v;
}

}  // namespace saturn::metrics::detail
