// Command forkjoin-go runs the `forkjoin` suite of docs/workloads.md with goroutines.
//
//	forkjoin-go [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//
// A join is what a Go user writes: `var wg sync.WaitGroup; wg.Add(1); go func() { b();
// wg.Done() }(); a(); wg.Wait()`. GOMAXPROCS = --threads. The workloads are a
// translation of bench/peers/common/cxx/forkjoin_work.hpp (work.go).
package main

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	peer "saturnpeers/common/go"
)

func join(a, b func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		b()
		wg.Done()
	}()
	a()
	wg.Wait()
}

func treeSum(t []node, i int) uint64 {
	n := &t[i]
	if n.left != none && n.right != none {
		var a, b uint64
		join(func() { a = treeSum(t, n.left) }, func() { b = treeSum(t, n.right) })
		return n.value + a + b
	}
	s := n.value
	if n.left != none {
		s += treeSum(t, n.left)
	}
	return s
}

func parSort(a []uint32) uint64 {
	if len(a) <= sortCutoff {
		seqSort(a)
		return 0
	}
	m := partition(a)
	var ja, jb uint64
	join(func() { ja = parSort(a[:m]) }, func() { jb = parSort(a[m:]) })
	return 1 + ja + jb
}

// matMul: C[c:] += A[a:] * B[b:] on n x n blocks of matN-stride matrices; returns joins.
func matMul(m *matrices, c, a, b, n int) uint64 {
	if n <= matLeaf {
		matLeafMul(m, c, a, b, n)
		return 0
	}
	h := n / 2
	s := matN
	q := func(p, r, col int) int { return p + r*h*s + col*h }
	c11, c12, c21, c22 := q(c, 0, 0), q(c, 0, 1), q(c, 1, 0), q(c, 1, 1)
	a11, a12, a21, a22 := q(a, 0, 0), q(a, 0, 1), q(a, 1, 0), q(a, 1, 1)
	b11, b12, b21, b22 := q(b, 0, 0), q(b, 0, 1), q(b, 1, 0), q(b, 1, 1)
	var j [8]uint64
	join(func() { join(func() { j[0] = matMul(m, c11, a11, b11, h) }, func() { j[1] = matMul(m, c12, a11, b12, h) }) },
		func() { join(func() { j[2] = matMul(m, c21, a21, b11, h) }, func() { j[3] = matMul(m, c22, a21, b12, h) }) })
	join(func() { join(func() { j[4] = matMul(m, c11, a12, b21, h) }, func() { j[5] = matMul(m, c12, a12, b22, h) }) },
		func() { join(func() { j[6] = matMul(m, c21, a22, b21, h) }, func() { j[7] = matMul(m, c22, a22, b22, h) }) })
	total := uint64(6)
	for _, x := range j {
		total += x
	}
	return total
}

type sample struct {
	wall     float64
	checksum uint64
	joins    uint64
}

func report(scenario string, threads, warmup int, all []sample, expect uint64) bool {
	var walls []float64
	for k, s := range all {
		if s.checksum != expect {
			fmt.Fprintf(os.Stderr, "forkjoin-go: %s checksum %d, expected %d\n", scenario, s.checksum, expect)
			return false
		}
		if k >= warmup {
			walls = append(walls, s.wall)
		}
	}
	wall := peer.Median(walls)
	tasks := 2 * all[0].joins
	peer.NewLine().S("suite", "forkjoin").S("scenario", scenario).S("runtime", "go").
		I("threads", int64(threads)).I("tasks", int64(tasks)).F("wall_s", wall, 6).
		F("ns_per_task", wall*1e9/float64(tasks), 2).I("checksum", int64(expect)).Print()
	return true
}

func main() {
	f := peer.ParseFlags(map[string]string{})
	f.CheckScenarios([]string{"tree_sum_4m", "quicksort_10m", "matmul_512"})
	n := f.Warmup + f.Samples
	ok := true
	if f.Wants("tree_sum_4m") {
		tree := buildTree()
		var all []sample
		for k := 0; k < n; k++ {
			t0 := time.Now()
			sum := treeSum(tree, 0)
			all = append(all, sample{time.Since(t0).Seconds(), sum, treeJoins()})
		}
		ok = report("tree_sum_4m", f.Threads, f.Warmup, all, treeExpected()) && ok
	}
	if f.Wants("quicksort_10m") {
		input := sortInput()
		ref := append([]uint32(nil), input...)
		sort.Slice(ref, func(i, j int) bool { return ref[i] < ref[j] })
		var all []sample
		for k := 0; k < n; k++ {
			v := append([]uint32(nil), input...)
			t0 := time.Now()
			joins := parSort(v)
			wall := time.Since(t0).Seconds()
			all = append(all, sample{wall, sortChecksum(v), joins})
		}
		ok = report("quicksort_10m", f.Threads, f.Warmup, all, sortChecksum(ref)) && ok
	}
	if f.Wants("matmul_512") {
		m := matInput()
		expect := matExpected(m)
		var all []sample
		for k := 0; k < n; k++ {
			for i := range m.c {
				m.c[i] = 0
			}
			t0 := time.Now()
			joins := matMul(m, 0, 0, 0, matN)
			wall := time.Since(t0).Seconds()
			all = append(all, sample{wall, matChecksum(m.c), joins})
		}
		ok = report("matmul_512", f.Threads, f.Warmup, all, expect) && ok
	}
	if !ok {
		os.Exit(1)
	}
}
