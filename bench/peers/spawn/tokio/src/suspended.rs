//! suspended_100k: 100,000 tasks wait on one shared `tokio::sync::Notify`; once all
//! are registered as waiters, RSS growth / tasks; then `notify_waiters` and join.
//!
//! Every sample is a fresh child process (this binary with `--child suspended_100k`):
//! in one process the allocator would hand the second sample the memory the first
//! freed, and the growth would read ~0.

use crate::{fail, header, multi_thread, on_worker};
use peer_common::{median, rss_bytes, Flags};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tokio::sync::Notify;

const TASKS: usize = 100_000;

/// One sample: (bytes per task, wall seconds, tasks that finished).
async fn sample() -> (f64, f64, usize) {
    // Leaked: tasks borrow them as &'static, without a reference count each.
    let event: &'static Notify = Box::leak(Box::new(Notify::new()));
    let waiting: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
    let before = rss_bytes();
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS)
        .map(|_| {
            tokio::spawn(async move {
                let wait = event.notified();
                tokio::pin!(wait);
                wait.as_mut().enable(); // a waiter from here on: notify_waiters wakes it
                waiting.fetch_add(1, Ordering::Release);
                wait.await;
                1usize
            })
        })
        .collect();
    while waiting.load(Ordering::Acquire) < TASKS {
        tokio::task::yield_now().await;
    }
    let after = rss_bytes();
    event.notify_waiters();
    let mut done = 0;
    for h in handles {
        done += h.await.expect("task");
    }
    let per_task = (after as f64 - before as f64) / TASKS as f64;
    (per_task, start.elapsed().as_secs_f64(), done)
}

/// The child's side: one sample, printed as three numbers on stdout.
pub fn child(threads: usize) {
    let rt = multi_thread(threads);
    let (per_task, wall, done) = on_worker(&rt, sample());
    println!("{per_task} {wall} {done}");
}

fn child_sample(threads: usize) -> (f64, f64) {
    let exe = std::env::current_exe().expect("own path");
    let out = std::process::Command::new(exe)
        .args(["--threads", &threads.to_string(), "--child", "suspended_100k"])
        .output()
        .expect("start the sample's child process");
    if !out.status.success() {
        fail(&format!("suspended_100k child: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    if v.len() != 3 || v[2] as usize != TASKS {
        fail(&format!("suspended_100k child printed {text:?}, expected {TASKS} tasks done"));
    }
    (v[0], v[1])
}

pub fn run(flags: &Flags) {
    let (mut per_task, mut walls) = (Vec::new(), Vec::new());
    for k in 0..flags.warmup + flags.samples {
        let (b, wall) = child_sample(flags.threads);
        if k >= flags.warmup {
            eprintln!("# tokio suspended_100k sample {}: {b:.1} B/task", k - flags.warmup);
            per_task.push(b);
            walls.push(wall);
        }
    }
    header("suspended_100k")
        .i("threads", flags.threads as u64)
        .i("tasks", TASKS as u64)
        .f("wall_s", median(&walls), 6)
        .f("bytes_per_task", median(&per_task), 1)
        .i("checksum", TASKS as u64)
        .print();
}
