//! `peer_common`: what every Rust peer of docs/workloads.md shares — the common
//! flags, nearest-rank percentiles and medians, memory probes, the busy loop, and
//! JSON Lines output.

pub mod flags;
pub mod json;
pub mod mem;
pub mod spin;
pub mod stats;

pub use flags::{Flags, ServerFlags};
pub use json::Line;
pub use mem::{peak_rss_kib, rss_bytes};
pub use spin::spin_for;
pub use stats::{median, median_sample, nearest_rank, Latencies};
