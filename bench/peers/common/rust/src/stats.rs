//! Medians over samples and nearest-rank percentiles over a sample's latencies.

/// Nearest-rank percentile `p` (0–100) of an ascending slice: the value at rank
/// ceil(p/100 × n), 1-based. 0 for an empty slice.
pub fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median (the mean of the two middle values for an even count; 0 when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Index of the median sample by `keys` (the lower middle one for an even count):
/// the sample whose latencies are reported.
pub fn median_sample(keys: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
    order[(keys.len().max(1) - 1) / 2]
}

/// p50/p95/p99 of one sample, in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Latencies {
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
}

impl Latencies {
    /// From per-task latencies in nanoseconds (sorted here).
    pub fn of_ns(mut ns: Vec<u64>) -> Latencies {
        ns.sort_unstable();
        let us = |p| nearest_rank(&ns, p) as f64 / 1e3;
        Latencies { p50_us: us(50.0), p95_us: us(95.0), p99_us: us(99.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_the_ceiling_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 50.0), 50);
        assert_eq!(nearest_rank(&v, 99.0), 99);
        assert_eq!(nearest_rank(&[7], 99.0), 7);
        assert_eq!(nearest_rank(&[1, 2, 3], 50.0), 2);
    }

    #[test]
    fn median_of_even_count_is_the_mean() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_sample(&[4.0, 1.0, 3.0, 2.0]), 3);
    }
}
