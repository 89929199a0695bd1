//! The scenario matrix of docs/workloads.md ("sched"): counts, submitters, bodies.

use std::time::Duration;

/// What a task does before its no-op.
#[derive(Clone, Copy)]
pub enum Body {
    Noop,
    /// A busy loop of this long.
    Spin(Duration),
    /// Task i: a 1 ms busy loop when i % 5 == 0, else nothing.
    EveryFifthSpins1ms,
}

/// How the tasks are submitted.
#[derive(Clone, Copy)]
pub enum Shape {
    /// `submitters` external threads, released together, tasks/submitters each.
    Flat(usize),
    /// One external thread submits `parents`; each spawns `children` from its worker.
    Fanout { parents: usize, children: usize },
    /// One external thread: half the tasks, wait, sleep `gap`, the other half, wait.
    Burst { gap: Duration },
}

pub struct Scenario {
    pub name: &'static str,
    pub tasks: usize,
    pub shape: Shape,
    pub body: Body,
}

pub const LARGEST: usize = 1_000_000;

pub fn all() -> Vec<Scenario> {
    let us = Duration::from_micros;
    let sc = |name, tasks, shape, body| Scenario { name, tasks, shape, body };
    vec![
        sc("flood_1m", 1_000_000, Shape::Flat(1), Body::Noop),
        sc("contended_spawn_8x", 100_000, Shape::Flat(8), Body::Noop),
        sc("cpu_work_10us", 10_000, Shape::Flat(1), Body::Spin(us(10))),
        sc("cpu_work_100us", 2_000, Shape::Flat(1), Body::Spin(us(100))),
        sc("contended_cpu_10us", 10_000, Shape::Flat(4), Body::Spin(us(10))),
        sc("nested_fanout_4x", 10_000, Shape::Fanout { parents: 2_000, children: 4 }, Body::Noop),
        sc("burst_drain_burst", 4_000, Shape::Burst { gap: Duration::from_millis(10) }, Body::Spin(us(50))),
        sc("mixed_fast_slow", 5_000, Shape::Flat(1), Body::EveryFifthSpins1ms),
    ]
}
