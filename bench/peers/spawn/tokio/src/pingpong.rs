//! yield_pingpong: two tasks on one worker hand a turn back and forth 10,000,000
//! times; a task whose turn it is not calls `tokio::task::yield_now()`.
//!
//! The one-worker runtime is Tokio's `current_thread` scheduler (what a Tokio user
//! picks for one thread); `--pingpong-flavor multi_thread` runs the work-stealing
//! scheduler with one worker instead and marks the line with `"variant"`.

use crate::{fail, header, multi_thread, on_worker};
use peer_common::{median, Flags};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

const SWITCHES: u64 = 10_000_000;

/// Plays `turns` turns as player `me` (false = the first player).
async fn player(turn: &'static AtomicBool, me: bool, turns: u64) -> u64 {
    for _ in 0..turns {
        while turn.load(Ordering::Acquire) != me {
            tokio::task::yield_now().await;
        }
        turn.store(!me, Ordering::Release);
    }
    turns
}

async fn sample() -> (f64, u64) {
    let turn: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let start = Instant::now();
    let a = tokio::spawn(player(turn, false, SWITCHES / 2));
    let b = tokio::spawn(player(turn, true, SWITCHES - SWITCHES / 2));
    let n = a.await.expect("task") + b.await.expect("task");
    (start.elapsed().as_secs_f64(), n)
}

pub fn run(flags: &Flags) {
    let flavor = flags.other("pingpong-flavor").unwrap_or("current_thread");
    let rt = match flavor {
        "current_thread" => tokio::runtime::Builder::new_current_thread().build().expect("runtime"),
        "multi_thread" => multi_thread(1),
        other => {
            eprintln!("spawn-tokio: --pingpong-flavor is current_thread or multi_thread, not {other}");
            std::process::exit(2);
        }
    };
    let mut walls = Vec::new();
    for k in 0..flags.warmup + flags.samples {
        let (wall, n) = on_worker(&rt, sample());
        if n != SWITCHES {
            fail(&format!("yield_pingpong: {n} hand-offs, expected {SWITCHES}"));
        }
        if k >= flags.warmup {
            eprintln!("# tokio yield_pingpong sample {}: {wall:.6} s", k - flags.warmup);
            walls.push(wall);
        }
    }
    let wall = median(&walls);
    let mut line = header("yield_pingpong");
    if flavor != "current_thread" {
        line = line.s("variant", "multi_thread_1_worker");
    }
    line.i("threads", 1)
        .i("switches", SWITCHES)
        .f("wall_s", wall, 6)
        .f("ns_per_switch", wall * 1e9 / SWITCHES as f64, 1)
        .i("checksum", SWITCHES)
        .print();
}
