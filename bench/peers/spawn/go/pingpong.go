package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	peer "saturnpeers/common/go"
)

const switches = 10_000_000

// pingpong: two goroutines pass a turn back and forth; one whose turn it is not
// calls runtime.Gosched. Wall ns and the hand-offs made.
func pingpong(total int) (int64, int64) {
	var turn atomic.Bool
	var handoffs atomic.Int64
	var wg sync.WaitGroup
	play := func(me bool, turns int) {
		defer wg.Done()
		for t := 0; t < turns; t++ {
			for turn.Load() != me {
				runtime.Gosched()
			}
			turn.Store(!me)
		}
		handoffs.Add(int64(turns))
	}
	start := peer.Now()
	wg.Add(2)
	go play(false, total/2)
	go play(true, total-total/2)
	wg.Wait()
	return peer.Now() - start, handoffs.Load()
}

func runPingpong(f *peer.Flags) {
	old := runtime.GOMAXPROCS(1) // two tasks on one worker
	defer runtime.GOMAXPROCS(old)
	var walls []float64
	for k := 0; k < f.Warmup+f.Samples; k++ {
		ns, n := pingpong(switches)
		if n != switches {
			fail("yield_pingpong: %d hand-offs, expected %d", n, switches)
		}
		if k >= f.Warmup {
			fmt.Fprintf(os.Stderr, "# go yield_pingpong sample %d: %.6f s\n", k-f.Warmup, float64(ns)/1e9)
			walls = append(walls, float64(ns)/1e9)
		}
	}
	wall := peer.Median(walls)
	header("yield_pingpong").I("threads", 1).I("switches", switches).
		F("wall_s", wall, 6).F("ns_per_switch", wall*1e9/switches, 1).
		I("checksum", switches).Print()
}
