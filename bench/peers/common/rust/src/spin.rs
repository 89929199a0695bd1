//! The contract's "busy loop of D µs": spin on the monotonic clock, never sleep.

use std::time::{Duration, Instant};

/// Spins until `d` has passed on the monotonic clock (`Instant`).
#[inline]
pub fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}
