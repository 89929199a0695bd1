// Command sched-go runs the `sched` suite of docs/workloads.md on Go's scheduler.
//
//	sched-go [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//	         [--submitters plain|locked]
//
// GOMAXPROCS = --threads. Submitters are goroutines (Go has no thread outside its
// scheduler); --submitters locked pins each to an OS thread (a variant). Tasks are
// `go` statements. See README.md.
package main

import (
	"fmt"
	"os"

	peer "saturnpeers/common/go"
)

func main() {
	peer.Usage += " [--submitters plain|locked]"
	f := peer.ParseFlags(map[string]string{"submitters": "plain"})
	switch f.Options["submitters"] {
	case "plain":
	case "locked":
		lockSubmitters = true
	default:
		fmt.Fprintln(os.Stderr, "sched-go: --submitters is plain or locked")
		os.Exit(2)
	}
	all := scenarios()
	var names []string
	for _, sc := range all {
		names = append(names, sc.name)
	}
	f.CheckScenarios(names)

	bd := &board{latency: make([]int64, largest)}
	for i := range all {
		sc := &all[i]
		if !f.Wants(sc.name) {
			continue
		}
		var walls, ops []float64
		var lats [][]int64
		var sums []int64
		for k := 0; k < f.Warmup+f.Samples; k++ {
			wall := float64(runSample(bd, sc)) / 1e9
			if got := bd.hits.Load(); got != int64(sc.tasks) {
				fmt.Fprintf(os.Stderr, "sched-go: %s: checksum %d != tasks %d\n", sc.name, got, sc.tasks)
				os.Exit(1)
			}
			if k < f.Warmup {
				continue
			}
			fmt.Fprintf(os.Stderr, "# go %s sample %d: wall %.6f s\n", sc.name, k-f.Warmup, wall)
			walls = append(walls, wall)
			ops = append(ops, float64(sc.tasks)/wall)
			lats = append(lats, append([]int64(nil), bd.latency[:sc.tasks]...))
			sums = append(sums, bd.hits.Load())
		}
		mid := peer.MedianSample(ops)
		p50, p95, p99 := peer.Latencies(lats[mid])
		l := peer.NewLine().S("suite", "sched").S("scenario", sc.name).S("runtime", "go")
		if lockSubmitters {
			l.S("variant", "locked_submitters")
		}
		l.I("threads", int64(f.Threads)).I("tasks", int64(sc.tasks)).
			F("wall_s", peer.Median(walls), 6).F("ops_per_sec", peer.Median(ops), 0).
			F("p50_us", p50, 3).F("p95_us", p95, 3).F("p99_us", p99, 3).
			I("checksum", sums[mid]).Print()
	}
}
