//! One sample of one scenario: submit from external threads through a runtime
//! `Handle`, wait for the last completion.

use crate::board::Board;
use crate::scenarios::{Body, Scenario, Shape};
use peer_common::spin_for;
use std::sync::atomic::Ordering;
use std::sync::Barrier;
use std::time::{Duration, Instant};
use tokio::runtime::Handle;

pub struct Sample {
    pub wall: Duration,
    pub latency_ns: Vec<u64>,
    pub checksum: u64,
}

#[inline]
fn body(b: Body, i: usize) {
    match b {
        Body::Noop => {}
        Body::Spin(d) => spin_for(d),
        Body::EveryFifthSpins1ms => {
            if i % 5 == 0 {
                spin_for(Duration::from_millis(1))
            }
        }
    }
}

async fn task(board: &'static Board, i: usize, submitted: Instant, b: Body) {
    body(b, i);
    board.hits.0.fetch_add(1, Ordering::Relaxed);
    board.done(i, submitted);
}

/// A parent: its no-op, then `children` detached `tokio::spawn`s from its worker
/// (the worker's own queue); children use slots after all the parents'.
async fn parent(board: &'static Board, i: usize, submitted: Instant, parents: usize, children: usize) {
    board.hits.0.fetch_add(1, Ordering::Relaxed);
    for c in 0..children {
        let slot = parents + i * children + c;
        drop(tokio::spawn(task(board, slot, Instant::now(), Body::Noop)));
    }
    board.done(i, submitted);
}

/// Submits tasks `from..to` from this thread; returns the first submit time.
fn submit(h: &Handle, board: &'static Board, from: usize, to: usize, b: Body) -> Instant {
    let first = Instant::now();
    for i in from..to {
        let t = if i == from { first } else { Instant::now() };
        drop(h.spawn(task(board, i, t, b))); // detached
    }
    first
}

fn submitters(h: &Handle, board: &'static Board, sc: &Scenario, n: usize) -> Instant {
    let each = sc.tasks / n;
    let go = Barrier::new(n);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..n)
            .map(|k| {
                let (h, go) = (h.clone(), &go);
                s.spawn(move || {
                    go.wait();
                    submit(&h, board, k * each, (k + 1) * each, sc.body)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).min().unwrap()
    })
}

pub fn run(h: &Handle, board: &'static Board, sc: &Scenario) -> Sample {
    board.clear(sc.tasks);
    let start = match sc.shape {
        Shape::Flat(1) => {
            board.expect(sc.tasks);
            submit(h, board, 0, sc.tasks, sc.body)
        }
        Shape::Flat(n) => {
            board.expect(sc.tasks);
            submitters(h, board, sc, n)
        }
        Shape::Fanout { parents, children } => {
            board.expect(sc.tasks);
            let first = Instant::now();
            for i in 0..parents {
                let t = if i == 0 { first } else { Instant::now() };
                drop(h.spawn(parent(board, i, t, parents, children)));
            }
            first
        }
        Shape::Burst { gap } => {
            let half = sc.tasks / 2;
            board.expect(half);
            let first = submit(h, board, 0, half, sc.body);
            board.wait_end();
            std::thread::sleep(gap);
            board.expect(half);
            submit(h, board, half, sc.tasks, sc.body);
            first
        }
    };
    let end = board.wait_end();
    Sample {
        wall: end.duration_since(start),
        latency_ns: board.latencies(sc.tasks),
        checksum: board.hits.0.load(Ordering::Relaxed),
    }
}
