// A thread_pool under deterministic simulation (saturn/sim/world.hpp): built while a
// sim::world lives on the constructing thread, the pool starts no thread. Every worker's
// loop is made on the world's thread, and whoever waits for the pool there (block_on,
// sim::run) drives it: a worker chosen by the world's seed takes one scheduling step at a
// time — the same order of looking for work as a worker thread (worker.cpp), then one
// runnable run — with the thread-locals that name the current worker, loop and scheduler
// switched to it. When no worker can step, the world advances to its next event or the
// nearest timer of any worker's loop. A worker that finds nothing goes down worker_main's
// idle path one step at a time — a search round, giving the search up, registering as a
// sleeper and re-checking, then asleep until an unpark, its ring or a timer wakes it — so
// the park/wake protocol runs for real and another worker's steps can fall between any
// two of those; work left queued while every worker sleeps is reported as a lost wake-up
// (sim::deadlock_error). Only the spin is skipped (time does not pass within a step).
// spawn_blocking runs its call inline. A multi-worker run is then a function of its
// seed: the interleaving of workers, which worker steals what, and the order completions
// arrive in are all drawn from it.
//
// Threading: everything here runs on the world's thread.
#pragma once

#include <saturn/detail/atomic.hpp>

namespace saturn::detail {

struct pool_impl;
struct worker;

/// Makes `p` simulated: its workers' loops are built on this thread (io mode) and it is
/// registered as a pool this thread drives. Called by the constructor instead of starting
/// worker threads.
void sim_pool_start(pool_impl& p);
/// The simulated side of ~thread_pool's phases 1 and 3: unregisters `p`, drains every
/// worker's ring as its worker (phase 1); sim_pool_release then destroys the loops.
void sim_pool_drain(pool_impl& p) noexcept;
void sim_pool_release(pool_impl& p) noexcept;

/// True when a simulated pool lives on this thread (waits here must drive it).
bool sim_pools_here() noexcept;
/// Steps the simulated pools of this thread until `done(ctx)` holds. Throws
/// sim::deadlock_error / sim::time_limit_error when the world can make no more progress
/// and `done` still does not hold.
void sim_drive_until(bool (*done)(void*), void* ctx);

/// One scheduling step of worker `w` (worker.cpp): finds one runnable as the worker
/// thread would, I/O polled without blocking, and runs it; or, with none, takes the next
/// step of the idle path (worker::sim_phase). False only for a worker asleep that
/// nothing woke.
bool sim_worker_step(pool_impl& p, worker& w);

}  // namespace saturn::detail
