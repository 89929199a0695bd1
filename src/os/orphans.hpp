// The orphan reaper's interface for child.cpp and spawn.cpp (see orphans.cpp).
#pragma once

namespace saturn::os::detail {

/// Takes ownership of the pidfd of a child that was not reaped and reaps it once it has
/// exited. Never blocks. Any thread.
void adopt_orphan(int pidfd) noexcept;

/// reap_orphans() for the hot paths: costs one atomic load when there are no orphans,
/// and skips the sweep when another thread is doing one.
void reap_orphans_if_any() noexcept;

}  // namespace saturn::os::detail
