/// \file
/// The loop's recycling allocator for operation objects (saturn/loop/detail/op_pool.hpp
/// describes it): what the callback tier and effect's callback starts allocate from, so
/// an operation that carries a callable costs no malloc in steady state.
#pragma once

#include <saturn/loop/detail/op_pool.hpp>
#include <saturn/loop/event_loop.hpp>

namespace saturn::ext {

/// Four size classes (32-256 bytes) over 64 KiB chunks; larger objects go to operator new.
/// Threading: one loop's thread only (no lock).
using op_pool = detail::op_pool;

/// `loop`'s pool. Memory from it must be returned to the same loop's pool, on its thread,
/// with the size and alignment it was allocated with. Loop thread only.
inline op_pool& pool(event_loop& loop) noexcept { return detail::loop_internals::pool(loop); }

}  // namespace saturn::ext
