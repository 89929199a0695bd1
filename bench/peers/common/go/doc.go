// Package peer holds what the Go peers of docs/workloads.md share: the common
// flags, a monotonic clock and busy loop, nearest-rank percentiles and medians,
// memory probes, and JSON Lines output.
package peer
