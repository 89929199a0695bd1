//! process-tokio: the `process` suite's spawn-and-wait on Tokio, the way a Tokio user
//! writes it: 64 tasks on the multi-thread runtime, each awaiting
//! `tokio::process::Command::new("/bin/true").status()` in a loop until N children
//! have been started.
//!
//!     process-tokio [--threads N] [--samples N] [--warmup N] [--children N] [--in-flight K]
//!
//! After every sample: no zombie child of this process and no child at all
//! (waitid(P_ALL, WNOHANG|WNOWAIT) gives ECHILD), else it fails without a figure.

use peer_common::{median, Flags, Line};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const PROGRAM: &str = "process-tokio";

fn fail(why: &str) -> ! {
    eprintln!("{PROGRAM}: {why}");
    std::process::exit(1)
}

/// Children of this process in state Z (/proc/<pid>/stat).
fn zombie_children() -> usize {
    let me = std::process::id() as i64;
    let mut n = 0;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let stat = match std::fs::read_to_string(format!("/proc/{name}/stat")) {
            Ok(s) => s,
            Err(_) => continue,
        };
        let paren = match stat.rfind(')') {
            Some(p) => p,
            None => continue,
        };
        let mut rest = stat[paren + 1..].split_whitespace();
        let state = rest.next().unwrap_or("");
        let ppid: i64 = rest.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if state == "Z" && ppid == me {
            n += 1;
        }
    }
    n
}

fn children_left() -> bool {
    let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::waitid(libc::P_ALL, 0, &mut si, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    r == 0
}

/// This process's own CPU seconds (user + system; children excluded).
fn self_cpu_s() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) as f64 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) as f64 / 1e6
}

async fn sample(total: usize, in_flight: usize) -> (f64, usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let ok = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..in_flight)
        .map(|_| {
            let (next, ok) = (next.clone(), ok.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let st = tokio::process::Command::new("/bin/true").status().await;
                    if matches!(st, Ok(s) if s.success()) {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("spawner task");
    }
    (start.elapsed().as_secs_f64(), ok.load(Ordering::Relaxed))
}

fn main() {
    let flags = Flags::parse(PROGRAM);
    flags.check_scenarios(PROGRAM, &["spawn_wait"]);
    let total: usize = flags.other("children").map(|v| v.parse().expect("--children N")).unwrap_or(10_000);
    let in_flight: usize = flags.other("in-flight").map(|v| v.parse().expect("--in-flight K")).unwrap_or(64);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut rates = Vec::new();
    let mut cpus = Vec::new();
    let mut checksum = 0;
    for k in 0..flags.warmup + flags.samples {
        let c0 = self_cpu_s();
        let (wall, ok) = rt.block_on(async { tokio::spawn(sample(total, in_flight)).await.expect("driver") });
        if ok != total {
            fail(&format!("spawn_wait: {ok} of {total} children exited 0"));
        }
        let z = zombie_children();
        if z != 0 {
            fail(&format!("spawn_wait: {z} zombie children after the sample"));
        }
        if children_left() {
            fail("spawn_wait: a child of this process is left after the sample");
        }
        let cpu_us = (self_cpu_s() - c0) / total as f64 * 1e6;
        checksum = ok;
        if k >= flags.warmup {
            eprintln!(
                "# tokio spawn_wait sample {}: {wall:.4} s, {:.0}/s, {cpu_us:.1} us CPU/child",
                k - flags.warmup,
                total as f64 / wall
            );
            rates.push(total as f64 / wall);
            cpus.push(cpu_us);
        }
    }
    Line::new()
        .s("suite", "process")
        .s("scenario", "spawn_wait")
        .s("runtime", "tokio")
        .i("threads", flags.threads as u64)
        .i("children", total as u64)
        .i("in_flight", in_flight as u64)
        .f("ops_per_sec", median(&rates), 1)
        .f("cpu_us_per_child", median(&cpus), 1)
        .i("zombies", 0)
        .i("checksum", checksum as u64)
        .print();
}
