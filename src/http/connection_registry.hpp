// The registry of open connections, for the timeouts and for stop(): each connection
// publishes its state (idle / reading a request / busy) and since when; a sweeper task
// walks the list a few times per timeout and shuts down (SHUT_RDWR) the sockets past their
// deadline, which ends their pending recv so the connection task closes itself. A
// connection costs one relaxed store per state change, no timer per read.
#pragma once

#include <sys/socket.h>

#include <saturn/detail/atomic.hpp>
#include <saturn/loop/clock.hpp>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>

namespace saturn::http::detail {

/// Milliseconds of CLOCK_MONOTONIC_COARSE (a vDSO read of a few ns; virtual time under a
/// simulation, see saturn/loop/clock.hpp).
inline std::int64_t coarse_now_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock::coarse_now().time_since_epoch()).count();
}

/// idle: waiting for a request; reading: a request began; busy: its handler runs;
/// sending: a response waits for room in the socket (since its last progress); closing:
/// shut down by the sweeper.
enum class conn_state : std::uint8_t { idle, reading, busy, sending, closing };

/// The deadlines a sweep enforces, in ms of coarse_now_ms (a timeout of 0: at once).
struct sweep_limits {
  std::int64_t header_ms;
  std::int64_t idle_ms;
  std::int64_t send_ms;
  /// Stopping (`stop_ms` != 0, the time of the stop): every idle or reading connection
  /// goes at once, a busy or sending one once `grace_ms` have passed since `stop_ms`.
  std::int64_t stop_ms = 0;
  std::int64_t grace_ms = 0;
};

/// One connection's entry; lives in the connection task's frame.
struct conn_entry {
  int fd = -1;
  saturn::detail::atomic<conn_state> state{conn_state::idle};
  saturn::detail::atomic<std::int64_t> since_ms{0};
  conn_entry* prev = nullptr;
  conn_entry* next = nullptr;

  /// Owner thread only. ordering: relaxed — the sweeper only needs an eventually
  /// consistent view; a late shutdown of a just-active socket is the accepted race, and
  /// the timestamp is stored before the state so a new state never pairs with an old time
  /// for long.
  void set(conn_state s, std::int64_t now) noexcept {
    since_ms.store(now, std::memory_order_relaxed);
    state.store(s, std::memory_order_relaxed);
  }
};

struct connection_registry {
  std::mutex mutex;
  conn_entry head;  // sentinel of a circular list
  saturn::detail::atomic<std::size_t> count{0};

  connection_registry() { head.prev = head.next = &head; }

  void add(conn_entry* e) {
    std::lock_guard lock(mutex);
    e->next = &head;
    e->prev = head.prev;
    head.prev->next = e;
    head.prev = e;
    count.fetch_add(1, std::memory_order_relaxed);
  }
  /// lifetime: removed before the fd is closed, and shutdown() happens under the mutex, so
  /// the sweeper never touches a closed (possibly reused) descriptor.
  void remove(conn_entry* e) {
    std::lock_guard lock(mutex);
    e->prev->next = e->next;
    e->next->prev = e->prev;
    count.fetch_sub(1, std::memory_order_relaxed);
  }
  /// Shuts down connections past their deadline.
  void sweep(std::int64_t now, const sweep_limits& l) {
    std::lock_guard lock(mutex);
    for (conn_entry* e = head.next; e != &head; e = e->next) {
      conn_state s = e->state.load(std::memory_order_relaxed);
      if (s == conn_state::closing)
        continue;
      std::int64_t age = now - e->since_ms.load(std::memory_order_relaxed);
      bool expired = (s == conn_state::reading && age >= l.header_ms) || (s == conn_state::idle && age >= l.idle_ms) ||
                     (s == conn_state::sending && age >= l.send_ms);
      if (l.stop_ms != 0)
        expired = expired || s == conn_state::idle || s == conn_state::reading || now - l.stop_ms >= l.grace_ms;
      if (expired) {
        e->state.store(conn_state::closing, std::memory_order_relaxed);
        ::shutdown(e->fd, SHUT_RDWR);
      }
    }
  }
};

}  // namespace saturn::http::detail
