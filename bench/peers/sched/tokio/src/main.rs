//! sched-tokio: the `sched` suite of docs/workloads.md on Tokio's multi-thread
//! runtime.
//!
//!     sched-tokio [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//!
//! External submitters are `std::thread`s calling `Handle::spawn`; nested children
//! are `tokio::spawn`ed by their parent on its worker. See README.md.

mod board;
mod sample;
mod scenarios;

use peer_common::{median, median_sample, Flags, Latencies, Line};

const PROGRAM: &str = "sched-tokio";

fn main() {
    let flags = Flags::parse(PROGRAM);
    let all = scenarios::all();
    let names: Vec<&str> = all.iter().map(|s| s.name).collect();
    flags.check_scenarios(PROGRAM, &names);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .build()
        .expect("tokio runtime");
    let h = rt.handle().clone();
    let board = board::Board::leak(scenarios::LARGEST);

    for sc in all.iter().filter(|s| flags.wants(s.name)) {
        let mut samples = Vec::new();
        for k in 0..flags.warmup + flags.samples {
            let s = sample::run(&h, board, sc);
            if s.checksum != sc.tasks as u64 {
                eprintln!("{PROGRAM}: {}: checksum {} != tasks {}", sc.name, s.checksum, sc.tasks);
                std::process::exit(1);
            }
            if k >= flags.warmup {
                eprintln!("# tokio {} sample {}: wall {:.6} s", sc.name, k - flags.warmup, s.wall.as_secs_f64());
                samples.push(s);
            }
        }
        let walls: Vec<f64> = samples.iter().map(|s| s.wall.as_secs_f64()).collect();
        let ops: Vec<f64> = walls.iter().map(|w| sc.tasks as f64 / w).collect();
        let mid = median_sample(&ops);
        let checksum = samples[mid].checksum;
        let lat = Latencies::of_ns(std::mem::take(&mut samples[mid].latency_ns));
        Line::new()
            .s("suite", "sched")
            .s("scenario", sc.name)
            .s("runtime", "tokio")
            .i("threads", flags.threads as u64)
            .i("tasks", sc.tasks as u64)
            .f("wall_s", median(&walls), 6)
            .f("ops_per_sec", median(&ops), 0)
            .f("p50_us", lat.p50_us, 3)
            .f("p95_us", lat.p95_us, 3)
            .f("p99_us", lat.p99_us, 3)
            .i("checksum", checksum)
            .print();
    }
}
