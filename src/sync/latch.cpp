// saturn::latch: an atomic count in front of an event.
#include <saturn/sync/latch.hpp>

#include <cstdio>
#include <cstdlib>

namespace saturn {

void latch::count_down(std::size_t n) noexcept {
  if (n == 0)
    return;
  // ordering: acq_rel: the count-downs form a release sequence, so the one reaching zero
  // acquires every earlier count-down's writes and publishes them through set().
  const std::size_t old = m_count.fetch_sub(n, std::memory_order_acq_rel);
  if (old < n) {
    std::fprintf(stderr, "saturn::latch::count_down: counted down by %zu with only %zu left; "
                 "the latch's initial count is too small\n", n, old);
    std::abort();
  }
  if (old == n)
    m_open.set();
}

}  // namespace saturn
