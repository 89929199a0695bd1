#pragma once
/// \file
/// `cell_binding`: counters' cells of the calling thread, looked up once and remembered
/// by a long-lived frame that adds to the same counters many times (the HTTP connection
/// task counting its requests and bytes).
///
/// counter::inc looks its cell up on every call (a TLS load, a chunk load, the cell's
/// address). A frame that remembers the cell pointers adds with a plain load-add-store,
/// after one check per use that it still runs on the thread that looked them up
/// (bound(): a TLS load and a compare). A frame that moved to another thread (a task
/// stolen by another worker) looks its cells up again: an add always lands in the
/// calling thread's own cell, as counter::inc's does.
///
/// Threading: a cell_binding belongs to one frame and is used by whatever thread runs
/// that frame, one at a time (like the frame's other locals). Never suspends or blocks;
/// bind() allocates the thread's shard or chunk the first time, as counter::inc does.

#include <saturn/metrics/counter.hpp>
#include <saturn/metrics/detail/cells.hpp>

namespace saturn::metrics::detail {

class cell_binding {
 public:
  /// True when the cells bind() returned belong to the calling thread.
  [[gnu::always_inline]] bool bound() const noexcept {
    shard* s = t_shard;
    return s == m_shard && s != nullptr;
  }
  /// The calling thread's cell of `c`; bound() is true on this thread afterwards.
  cell* bind(const counter& c) {
    cell* p = &cell_at(c.m_cell);
    m_shard = t_shard;
    return p;
  }

 private:
  shard* m_shard = nullptr;
};

}  // namespace saturn::metrics::detail
