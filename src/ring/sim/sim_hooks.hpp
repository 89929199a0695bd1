// What a scheduler above the ring may ask of the simulated world (saturn/sim/world.hpp)
// without seeing liburing: whether one lives on this thread, a seeded choice, and a
// world-level wait; and what the socket layer asks of the world's in-world TCP (its
// listeners, the TCP addresses of AF_UNIX pairs that stand for connections). A simulated thread_pool (src/sched/sim_pool.cpp) runs several rings on
// the world's thread; none of them may sleep on its own, since the completion that ends
// the wait can be another ring's.
#pragma once

#include <sys/socket.h>

#include <cstdint>

namespace saturn::ring {

/// True while a sim::world lives and the calling thread is its thread.
bool sim_active() noexcept;

/// Uniform in [0, n) from the world's seeded stream (0 when n is 0). World thread only,
/// while sim_active().
std::uint64_t sim_random_below(std::uint64_t n) noexcept;

/// Folds `v` (a scheduler's choice: which worker ran a step) into the world's trace hash,
/// so a schedule that changes shows in the hash even when no completion does. World
/// thread only, while sim_active().
void sim_trace(std::uint64_t v) noexcept;

/// True when the simulated ring whose (fake) descriptor is `ring_fd` has a completion
/// waiting in its CQ. World thread only, while sim_active().
bool sim_ring_has_completion(int ring_fd) noexcept;

/// Runs the world's events (virtual time jumps to each) until a simulated ring has a
/// completion ready, `extra(ctx)` holds (null: never), or virtual time reaches
/// `deadline_ns` (a saturn::clock time_point's count; INT64_MAX: none). Throws
/// sim::deadlock_error when nothing could ever complete and there is no deadline, and
/// sim::time_limit_error past options::time_limit, as a ring's own wait does. World
/// thread only, while sim_active().
void sim_wait_any(bool (*extra)(void*), void* ctx, std::int64_t deadline_ns);

/// A listening socket the program made: connects to its port between endpoints of the
/// world become in-world connections (src/ring/sim/net.cpp). World thread only, while
/// sim_active().
void sim_note_listener(int fd) noexcept;

/// For an in-world connection's descriptor (really an AF_UNIX pair's end), the address
/// getsockname (peer: getpeername) gives the TCP connection it stands for; false for any
/// other descriptor, or when no world lives on this thread. Any thread.
bool sim_socket_name(int fd, bool peer, ::sockaddr_storage& out, ::socklen_t& len) noexcept;

}  // namespace saturn::ring
