// The virtual-time word behind saturn::clock (include/saturn/loop/clock.hpp).
#include <saturn/loop/clock.hpp>

namespace saturn::detail {

constinit detail::atomic<std::int64_t> g_virtual_now_ns{0};

}  // namespace saturn::detail
