//! The state every task of a sample reports to: the no-op counter, one latency slot
//! per task, and a countdown whose last step stamps the end time and wakes the
//! waiting submitter. Leaked once, so tasks hold a plain `&'static` (no per-task
//! reference count).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Keeps a hot counter on its own cache lines.
#[repr(align(128))]
pub struct Alone<T>(pub T);

pub struct Board {
    pub hits: Alone<AtomicU64>,
    left: Alone<AtomicUsize>,
    end: Mutex<Option<Instant>>,
    ended: Condvar,
    latency_ns: Vec<AtomicU64>,
}

impl Board {
    pub fn leak(slots: usize) -> &'static Board {
        Box::leak(Box::new(Board {
            hits: Alone(AtomicU64::new(0)),
            left: Alone(AtomicUsize::new(0)),
            end: Mutex::new(None),
            ended: Condvar::new(),
            latency_ns: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        }))
    }

    /// Starts a sample: counters and `tasks` latency slots zeroed.
    pub fn clear(&self, tasks: usize) {
        self.hits.0.store(0, Ordering::Relaxed);
        for slot in &self.latency_ns[..tasks] {
            slot.store(0, Ordering::Relaxed);
        }
    }

    /// Expects `n` more completions before `wait_end` returns.
    pub fn expect(&self, n: usize) {
        *self.end.lock().unwrap() = None;
        self.left.0.store(n, Ordering::Release);
    }

    /// Task `i`, submitted at `submitted`, has finished.
    #[inline]
    pub fn done(&self, i: usize, submitted: Instant) {
        let now = Instant::now();
        self.latency_ns[i].store((now - submitted).as_nanos() as u64, Ordering::Relaxed);
        if self.left.0.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.end.lock().unwrap() = Some(now);
            self.ended.notify_all();
        }
    }

    /// Blocks until the expected completions happened; the last one's time.
    pub fn wait_end(&self) -> Instant {
        let mut end = self.end.lock().unwrap();
        loop {
            if let Some(t) = *end {
                return t;
            }
            end = self.ended.wait(end).unwrap();
        }
    }

    pub fn latencies(&self, tasks: usize) -> Vec<u64> {
        self.latency_ns[..tasks].iter().map(|a| a.load(Ordering::Relaxed)).collect()
    }
}
