package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	peer "saturnpeers/common/go"
)

const suspendedTasks = 100_000

// suspendedSample: n goroutines block receiving from one channel (the shared
// event); once all have started, RSS growth per goroutine; then close(event) and
// wait for all. Bytes per task, wall ns, goroutines that finished.
func suspendedSample(n int) (float64, int64, int64) {
	event := make(chan struct{})
	var started, finished atomic.Int64
	var wg sync.WaitGroup
	before := peer.RSSBytes()
	start := peer.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			started.Add(1)
			<-event
			finished.Add(1)
		}()
	}
	for started.Load() < int64(n) {
		runtime.Gosched()
	}
	after := peer.RSSBytes()
	close(event)
	wg.Wait()
	return float64(after-before) / float64(n), peer.Now() - start, finished.Load()
}

// suspendedChild is one sample in a fresh process (--child suspended_100k): in one
// process the second sample would reuse the first one's freed goroutine stacks and
// the growth would read ~0.
func suspendedChild() {
	b, ns, done := suspendedSample(suspendedTasks)
	fmt.Printf("%g %d %d\n", b, ns, done)
}

func runSuspended(f *peer.Flags) {
	self, err := os.Executable()
	if err != nil {
		fail("own path: %v", err)
	}
	var perTask, walls []float64
	for k := 0; k < f.Warmup+f.Samples; k++ {
		out, err := exec.Command(self, "--threads", strconv.Itoa(f.Threads), "--child", "suspended_100k").Output()
		if err != nil {
			fail("suspended_100k child: %v", err)
		}
		v := strings.Fields(string(out))
		if len(v) != 3 || v[2] != strconv.Itoa(suspendedTasks) {
			fail("suspended_100k child printed %q, expected %d tasks done", out, suspendedTasks)
		}
		b, _ := strconv.ParseFloat(v[0], 64)
		ns, _ := strconv.ParseInt(v[1], 10, 64)
		if k >= f.Warmup {
			fmt.Fprintf(os.Stderr, "# go suspended_100k sample %d: %.1f B/task\n", k-f.Warmup, b)
			perTask = append(perTask, b)
			walls = append(walls, float64(ns)/1e9)
		}
	}
	header("suspended_100k").I("threads", int64(f.Threads)).I("tasks", suspendedTasks).
		F("wall_s", peer.Median(walls), 6).F("bytes_per_task", peer.Median(perTask), 1).
		I("checksum", suspendedTasks).Print()
}
