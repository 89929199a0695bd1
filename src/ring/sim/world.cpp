// sim::world: installs a simulated kernel for the rings set up while it lives, and hands
// the virtual clock to saturn::clock (include/saturn/sim/world.hpp).
#include <saturn/sim/world.hpp>

#include <saturn/config.hpp>
#include <saturn/loop/clock.hpp>

#include <mutex>
#include <stdexcept>

#include "ring/sim/kernel.hpp"
#include "ring/sim/sim_hooks.hpp"

namespace saturn::ring {
namespace {
std::mutex g_lock;
std::shared_ptr<sim_kernel> g_kernel;  // guarded by g_lock
}  // namespace

std::shared_ptr<sim_kernel> current_sim_kernel() noexcept {
  std::lock_guard lock(g_lock);
  return g_kernel;
}
bool sim_active() noexcept {
  std::shared_ptr<sim_kernel> k = current_sim_kernel();
  return k && k->on_world_thread();
}

std::uint64_t sim_random_below(std::uint64_t n) noexcept {
  std::shared_ptr<sim_kernel> k = current_sim_kernel();
  return k ? k->prng().below(n) : 0;
}

void sim_trace(std::uint64_t v) noexcept {
  if (std::shared_ptr<sim_kernel> k = current_sim_kernel())
    k->trace(v);
}

bool sim_ring_has_completion(int ring_fd) noexcept {
  std::shared_ptr<sim_kernel> k = current_sim_kernel();
  sim_ring* r = k ? k->ring_by_fd(ring_fd) : nullptr;
  return r != nullptr && r->has_completion();
}

void sim_wait_any(bool (*extra)(void*), void* ctx, std::int64_t deadline_ns) {
  std::shared_ptr<sim_kernel> k = current_sim_kernel();
  if (!k)
    throw std::logic_error("saturn::sim: a world-level wait with no sim::world alive");
  k->wait_any(extra, ctx, deadline_ns);
}

void sim_note_listener(int fd) noexcept {
  if (std::shared_ptr<sim_kernel> k = current_sim_kernel(); k && k->on_world_thread())
    k->note_listener(fd);
}

bool sim_socket_name(int fd, bool peer, ::sockaddr_storage& out, ::socklen_t& len) noexcept {
  std::shared_ptr<sim_kernel> k = current_sim_kernel();
  return k && k->on_world_thread() && k->world_socket_name(fd, peer, out, len);
}

}  // namespace saturn::ring

namespace saturn::sim {

world::world(std::uint64_t seed, const options& opts) : m_kernel(std::make_shared<ring::sim_kernel>(seed, opts)) {
  if constexpr (!config::simulation)
    throw std::logic_error("saturn::sim::world: this libsaturn was built with SATURN_SIMULATION=OFF");
  std::lock_guard lock(ring::g_lock);
  if (ring::g_kernel)
    throw std::logic_error("saturn::sim::world: another world lives (worlds do not nest)");
  ring::g_kernel = m_kernel;
  // ordering: relaxed; clock::now() on this thread reads it.
  saturn::detail::g_virtual_now_ns.store(m_kernel->now(), std::memory_order_relaxed);
}

world::~world() {
  std::lock_guard lock(ring::g_lock);
  ring::g_kernel.reset();
  saturn::detail::g_virtual_now_ns.store(0, std::memory_order_relaxed);
}

std::uint64_t world::seed() const noexcept { return m_kernel->seed(); }
std::uint64_t world::trace_hash() const noexcept { return m_kernel->trace_hash(); }
std::uint64_t world::completions() const noexcept { return m_kernel->completions(); }
std::chrono::nanoseconds world::elapsed() const noexcept {
  return std::chrono::nanoseconds(m_kernel->now() - m_kernel->epoch());
}
std::uint64_t world::random() noexcept { return m_kernel->prng().next(); }
std::uint64_t world::random_below(std::uint64_t n) noexcept { return m_kernel->prng().below(n); }
std::size_t world::crash() noexcept { return m_kernel->disk().crash(); }
std::uint64_t world::disk_used() const noexcept { return m_kernel->disk().used(); }
void world::partition(std::uint16_t port) { m_kernel->set_net_rule(port, ring::sim_kernel::net_rule::cut); }
void world::heal(std::uint16_t port) { m_kernel->set_net_rule(port, ring::sim_kernel::net_rule::open); }
void world::reset(std::uint16_t port) { m_kernel->set_net_rule(port, ring::sim_kernel::net_rule::reset); }

}  // namespace saturn::sim
