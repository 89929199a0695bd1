//! spawn-tokio: the `spawn` suite of docs/workloads.md on Tokio.
//!
//!     spawn-tokio [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//!                 [--pingpong-flavor current_thread|multi_thread]
//!
//! Every scenario runs inside the runtime, in a driver task on a worker.
//! See README.md beside this file for the configuration and why.

mod pingpong;
mod spawn_join;
mod suspended;

use peer_common::{Flags, Line};
use tokio::runtime::Runtime;

pub const SCENARIOS: [&str; 3] = ["spawn_join_1m", "suspended_100k", "yield_pingpong"];
const PROGRAM: &str = "spawn-tokio";

/// The multi-thread (work-stealing) runtime with `threads` workers, no I/O or timer
/// driver (nothing here uses them).
pub fn multi_thread(threads: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .build()
        .expect("tokio runtime")
}

/// Runs `fut` as a task on one of `rt`'s workers (not on the `block_on` thread).
pub fn on_worker<F>(rt: &Runtime, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.block_on(rt.spawn(fut)).expect("driver task")
}

/// The first fields of every line of this program.
pub fn header(scenario: &str) -> Line {
    Line::new().s("suite", "spawn").s("scenario", scenario).s("runtime", "tokio")
}

/// Exits 1 with `why` on stderr (a failed check: no figure is printed).
pub fn fail(why: &str) -> ! {
    eprintln!("{PROGRAM}: {why}");
    std::process::exit(1)
}

fn main() {
    let flags = Flags::parse(PROGRAM);
    if flags.other("child") == Some("suspended_100k") {
        suspended::child(flags.threads);
        return;
    }
    flags.check_scenarios(PROGRAM, &SCENARIOS);
    if flags.wants("spawn_join_1m") {
        spawn_join::run(&flags);
    }
    if flags.wants("suspended_100k") {
        suspended::run(&flags);
    }
    if flags.wants("yield_pingpong") {
        pingpong::run(&flags);
    }
}
