package main

import (
	"fmt"
	"os"
	"sync"

	peer "saturnpeers/common/go"
)

const spawnTasks = 1_000_000

// spawnJoin starts goroutine i for i < n; it stores i in its slot of a results
// slice and signals a WaitGroup (a goroutine has no return value: this is how Go
// code collects results). Wall ns and the sum.
func spawnJoin(n int) (int64, int64) {
	start := peer.Now()
	results := make([]int64, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			results[i] = int64(i)
			wg.Done()
		}(i)
	}
	wg.Wait()
	var sum int64
	for _, v := range results {
		sum += v
	}
	return peer.Now() - start, sum
}

func runSpawnJoin(f *peer.Flags) {
	want := int64(spawnTasks) * (spawnTasks - 1) / 2
	var walls []float64
	var sum int64
	for k := 0; k < f.Warmup+f.Samples; k++ {
		ns, s := spawnJoin(spawnTasks)
		if s != want {
			fail("spawn_join_1m: sum %d, expected %d", s, want)
		}
		sum = s
		if k >= f.Warmup {
			fmt.Fprintf(os.Stderr, "# go spawn_join_1m sample %d: %.6f s\n", k-f.Warmup, float64(ns)/1e9)
			walls = append(walls, float64(ns)/1e9)
		}
	}
	wall := peer.Median(walls)
	header("spawn_join_1m").I("threads", int64(f.Threads)).I("tasks", spawnTasks).
		F("wall_s", wall, 6).F("ns_per_task", wall*1e9/spawnTasks, 1).
		I("peak_rss_kib", peer.PeakRSSKiB()).I("checksum", sum).Print()
}
