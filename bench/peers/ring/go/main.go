// Command ring-go runs the `ring` suite of docs/workloads.md: N goroutines in a
// ring, each with an unbuffered channel as its mailbox.
//
//	ring-go N LAPS [--samples S] [--warmup W] [--threads T]
//
// Goroutine i receives v and sends v-1 to goroutine (i+1) mod N; main sends N*LAPS
// to goroutine 0; whoever receives 0 tells main. Each goroutine counts what it
// forwarded; after the timed part, closing every mailbox ends the goroutines,
// which add their counts into the checksum. GOMAXPROCS = --threads. See README.md.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	peer "saturnpeers/common/go"
)

type result struct{ spawnNs, hopsNs, hops int64 }

func member(in <-chan int64, next chan<- int64, finished chan<- struct{}, hops *atomic.Int64, wg *sync.WaitGroup) {
	defer wg.Done()
	var forwarded int64
	for v := range in {
		if v == 0 {
			finished <- struct{}{}
			continue
		}
		next <- v - 1
		forwarded++
	}
	hops.Add(forwarded)
}

func ring(n, laps int) result {
	var hops atomic.Int64
	var wg sync.WaitGroup
	finished := make(chan struct{}, 1)
	t0 := peer.Now()
	mailbox := make([]chan int64, n)
	for i := range mailbox {
		mailbox[i] = make(chan int64)
	}
	wg.Add(n)
	for i := 0; i < n; i++ {
		go member(mailbox[i], mailbox[(i+1)%n], finished, &hops, &wg)
	}
	t1 := peer.Now()
	mailbox[0] <- int64(n) * int64(laps)
	<-finished
	t2 := peer.Now()
	for _, m := range mailbox {
		close(m)
	}
	wg.Wait()
	return result{t1 - t0, t2 - t1, hops.Load()}
}

func main() {
	peer.Usage = "N LAPS [--samples S] [--warmup W] [--threads T]"
	f := peer.ParseFlags(nil)
	if len(f.Positional) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ring-go", peer.Usage)
		os.Exit(2)
	}
	n, err1 := strconv.Atoi(f.Positional[0])
	laps, err2 := strconv.Atoi(f.Positional[1])
	if err1 != nil || err2 != nil || n < 1 || laps < 1 {
		fmt.Fprintln(os.Stderr, "usage: ring-go", peer.Usage)
		os.Exit(2)
	}
	want := int64(n) * int64(laps)
	var spawnPer, rates, walls []float64
	for k := 0; k < f.Warmup+f.Samples; k++ {
		r := ring(n, laps)
		if r.hops != want {
			fmt.Fprintf(os.Stderr, "ring-go: checksum %d != N*LAPS %d\n", r.hops, want)
			os.Exit(1)
		}
		if k < f.Warmup {
			continue
		}
		fmt.Fprintf(os.Stderr, "# go ring %d x %d sample %d: spawn %.3f ms, hops %.3f ms\n",
			n, laps, k-f.Warmup, float64(r.spawnNs)/1e6, float64(r.hopsNs)/1e6)
		spawnPer = append(spawnPer, float64(r.spawnNs)/float64(n))
		rates = append(rates, float64(want)/(float64(r.hopsNs)/1e9))
		walls = append(walls, float64(r.hopsNs)/1e9)
	}
	peer.NewLine().S("suite", "ring").S("scenario", fmt.Sprintf("ring_%d_%d", n, laps)).
		S("runtime", "go").I("threads", int64(f.Threads)).
		I("procs", int64(n)).I("laps", int64(laps)).I("hops", want).
		F("wall_s", peer.Median(walls), 6).
		F("spawn_ns_per_proc", peer.Median(spawnPer), 1).
		F("hops_per_sec", peer.Median(rates), 0).
		I("peak_rss_kib", peer.PeakRSSKiB()).I("checksum", want).Print()
}
