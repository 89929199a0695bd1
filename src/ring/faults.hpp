// The interposed part of a ring under fault injection (include/saturn/testing/
// fault_injection.hpp): rewrites SQEs just before they go to the kernel and substitutes
// the results of the operations it failed. One per ring, used on the ring's thread only.
#pragma once

#include <liburing.h>

#include <saturn/testing/fault_injection.hpp>

#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>

namespace saturn::ring {

class ring_faults {
 public:
  explicit ring_faults(std::shared_ptr<testing::fault_state> state);

  /// Looks at the SQEs in [from, to) of `ring`'s SQ (not yet seen by the kernel).
  void on_submit(io_uring& ring, unsigned from, unsigned to) noexcept;
  /// The result to deliver for a CQE: the injected error for a failed operation.
  int on_cqe(std::uint64_t user_data, int res) noexcept {
    if (m_failed.empty())
      return res;
    return on_cqe_slow(user_data, res);
  }
  /// An operation of the loop's own (its wake read) that must never be touched.
  void exempt(std::uint64_t user_data) noexcept { m_exempt = user_data; }

 private:
  int on_cqe_slow(std::uint64_t user_data, int res) noexcept;
  void inspect(io_uring_sqe* sqe) noexcept;

  std::shared_ptr<testing::fault_state> m_state;
  std::mt19937_64 m_rng;
  std::unordered_map<std::uint64_t, int> m_failed;  // user_data -> injected -errno
  std::uint64_t m_seen = 0;
  std::uint64_t m_exempt = 0;
};

}  // namespace saturn::ring
