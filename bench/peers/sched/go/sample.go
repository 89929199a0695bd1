package main

import (
	"runtime"
	"sync"
	"time"

	peer "saturnpeers/common/go"
)

// lockSubmitters: --submitters locked (each submitter on its own OS thread).
var lockSubmitters bool

func work(b body, i int) {
	switch {
	case b.spinNs > 0:
		peer.Spin(b.spinNs)
	case b.everyFifth && i%5 == 0:
		peer.Spin(int64(time.Millisecond))
	}
}

func task(bd *board, i int, submitted int64, b body) {
	work(b, i)
	bd.hits.Add(1)
	bd.done(i, submitted)
}

// parent does its no-op, then starts its children from the P it runs on; the
// children use the slots after all the parents'.
func parent(bd *board, i int, submitted int64, sc *scenario) {
	bd.hits.Add(1)
	for c := 0; c < sc.children; c++ {
		go task(bd, sc.parents+i*sc.children+c, peer.Now(), body{})
	}
	bd.done(i, submitted)
}

// submit starts tasks from..to-1 from the calling goroutine; the first submit time.
func submit(bd *board, from, to int, b body) int64 {
	first := peer.Now()
	for i := from; i < to; i++ {
		t := first
		if i > from {
			t = peer.Now()
		}
		go task(bd, i, t, b)
	}
	return first
}

// submitters runs n submitter goroutines, released together; the earliest start.
func submitters(bd *board, sc *scenario, n int) int64 {
	each := sc.tasks / n
	firsts := make([]int64, n)
	var ready, finished sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	finished.Add(n)
	for k := 0; k < n; k++ {
		go func(k int) {
			defer finished.Done()
			if lockSubmitters {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			ready.Done()
			<-release
			firsts[k] = submit(bd, k*each, (k+1)*each, sc.body)
		}(k)
	}
	ready.Wait()
	close(release)
	finished.Wait()
	first := firsts[0]
	for _, f := range firsts {
		if f < first {
			first = f
		}
	}
	return first
}

// runSample runs one sample of sc; its wall time in ns.
func runSample(bd *board, sc *scenario) int64 {
	bd.clear(sc.tasks)
	if lockSubmitters && sc.submitters == 1 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	var start int64
	switch {
	case sc.parents > 0:
		bd.expect(sc.tasks)
		start = peer.Now()
		for i := 0; i < sc.parents; i++ {
			t := start
			if i > 0 {
				t = peer.Now()
			}
			go parent(bd, i, t, sc)
		}
	case sc.gapNs > 0:
		half := sc.tasks / 2
		bd.expect(half)
		start = submit(bd, 0, half, sc.body)
		bd.waitEnd()
		time.Sleep(time.Duration(sc.gapNs))
		bd.expect(half)
		submit(bd, half, sc.tasks, sc.body)
	case sc.submitters == 1:
		bd.expect(sc.tasks)
		start = submit(bd, 0, sc.tasks, sc.body)
	default:
		bd.expect(sc.tasks)
		start = submitters(bd, sc, sc.submitters)
	}
	return bd.waitEnd() - start
}
