// The collector of saturn's runtime statistics, added to registry::global().
#pragma once

#include <saturn/metrics/registry.hpp>

namespace saturn::metrics::detail {

/// Renders live_pool_stats() (workers, rings, timers), live_runtime_stats(), the frame
/// allocator's bytes and process_stats().
collector runtime_collector();

}  // namespace saturn::metrics::detail
