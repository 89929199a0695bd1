//! spawn_join_1m: 1,000,000 `tokio::spawn`s, task i returns i, every JoinHandle
//! awaited in spawn order; checksum = the sum.

use crate::{fail, header, multi_thread, on_worker};
use peer_common::{median, peak_rss_kib, Flags};
use std::time::Instant;

const TASKS: u64 = 1_000_000;

async fn sample() -> (f64, u64) {
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS).map(|i| tokio::spawn(async move { i })).collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.expect("task");
    }
    (start.elapsed().as_secs_f64(), sum)
}

pub fn run(flags: &Flags) {
    let rt = multi_thread(flags.threads);
    let want = TASKS * (TASKS - 1) / 2;
    let (mut walls, mut checksum) = (Vec::new(), 0);
    for k in 0..flags.warmup + flags.samples {
        let (wall, sum) = on_worker(&rt, sample());
        if sum != want {
            fail(&format!("spawn_join_1m: sum {sum}, expected {want}"));
        }
        checksum = sum;
        if k >= flags.warmup {
            eprintln!("# tokio spawn_join_1m sample {}: {wall:.6} s", k - flags.warmup);
            walls.push(wall);
        }
    }
    let wall = median(&walls);
    header("spawn_join_1m")
        .i("threads", flags.threads as u64)
        .i("tasks", TASKS)
        .f("wall_s", wall, 6)
        .f("ns_per_task", wall * 1e9 / TASKS as f64, 1)
        .i("peak_rss_kib", peak_rss_kib())
        .i("checksum", checksum)
        .print();
}
