// The calling thread's current event loop (event_loop::current()), replaceable by a
// scheduler that runs several loops on one thread: a simulated thread_pool steps every
// worker on the simulation's thread (src/sched/sim_pool.cpp) and makes the stepping
// worker's loop current for the step.
#pragma once

namespace saturn {
class event_loop;
namespace detail {

/// Makes `l` the calling thread's current loop and returns the previous one. The caller
/// puts the previous one back before any loop on this thread is created or destroyed (the
/// loops' chain of predecessors starts at the current loop). Calling thread only.
event_loop* exchange_current_loop(event_loop* l) noexcept;

}  // namespace detail
}  // namespace saturn
