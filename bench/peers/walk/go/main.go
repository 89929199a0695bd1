// Command walk-go runs the `walk` suite of docs/workloads.md: a goroutine per
// directory, a sync.WaitGroup, two atomic counters.
//
//	walk-go [--threads N] ROOT
//
// Prints `<N> file(s)` and `<M> directories(s)` (M counts ROOT). Entries come from
// (*os.File).ReadDir(-1) (unsorted, their type from d_type), so symlinks are never
// followed and count as files. An unreadable directory: message, exit 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

type walker struct {
	files, dirs atomic.Int64
	wg          sync.WaitGroup
}

func (w *walker) walk(dir string) {
	defer w.wg.Done()
	d, err := os.Open(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "walk-go: cannot read %s: %v\n", dir, err)
		os.Exit(1)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "walk-go: cannot read %s: %v\n", dir, err)
		os.Exit(1)
	}
	var files, dirs int64
	for _, e := range entries {
		if !e.IsDir() {
			files++
			continue
		}
		dirs++
		w.wg.Add(1)
		go w.walk(dir + "/" + e.Name())
	}
	w.files.Add(files)
	w.dirs.Add(dirs)
}

func main() {
	threads := flag.Int("threads", 0, "GOMAXPROCS (default: the CPUs in the affinity mask)")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: walk-go [--threads N] ROOT") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *threads > 0 {
		runtime.GOMAXPROCS(*threads)
	}
	w := &walker{}
	w.dirs.Store(1) // ROOT
	w.wg.Add(1)
	w.walk(flag.Arg(0))
	w.wg.Wait()
	fmt.Printf("%d file(s)\n%d directories(s)\n", w.files.Load(), w.dirs.Load())
}
