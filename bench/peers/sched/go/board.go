package main

import (
	"sync/atomic"

	peer "saturnpeers/common/go"
)

// board is what every task of a sample reports to: the no-op counter, one
// latency slot per task, and a countdown whose last step stamps the end time and
// closes `ended`. Hot counters sit on their own cache lines.
type board struct {
	_       [128]byte
	hits    atomic.Int64
	_       [120]byte
	left    atomic.Int64
	_       [120]byte
	endNs   int64
	ended   chan struct{}
	latency []int64
}

func (b *board) clear(tasks int) {
	b.hits.Store(0)
	for i := range b.latency[:tasks] {
		b.latency[i] = 0
	}
}

// expect arms the countdown for n more completions.
func (b *board) expect(n int) {
	b.ended = make(chan struct{})
	b.left.Store(int64(n))
}

// done records task i (submitted at submitted) as finished.
func (b *board) done(i int, submitted int64) {
	now := peer.Now()
	b.latency[i] = now - submitted
	if b.left.Add(-1) == 0 {
		b.endNs = now
		close(b.ended)
	}
}

// waitEnd blocks until the armed completions happened; the last one's time.
func (b *board) waitEnd() int64 {
	<-b.ended
	return b.endNs
}
