package peer

import (
	"math"
	"sort"
)

// NearestRank is the p-th percentile (0-100) of an ascending slice: the value at
// rank ceil(p/100 * n), 1-based; 0 for an empty slice.
func NearestRank(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	r := int(math.Ceil(p / 100 * float64(n)))
	if r < 1 {
		r = 1
	} else if r > n {
		r = n
	}
	return sorted[r-1]
}

// Latencies are p50/p95/p99 in microseconds of per-task nanoseconds (sorted in place).
func Latencies(ns []int64) (p50, p95, p99 float64) {
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	us := func(p float64) float64 { return float64(NearestRank(ns, p)) / 1e3 }
	return us(50), us(95), us(99)
}

// Median of values (the mean of the two middle ones for an even count; 0 if empty).
func Median(values []float64) float64 {
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	n := len(v)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return v[n/2]
	default:
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// MedianSample is the index of the median sample by keys (the lower middle one
// for an even count): the sample whose latencies are reported.
func MedianSample(keys []float64) int {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	return order[(len(keys)-1)/2]
}
