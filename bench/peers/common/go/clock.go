package peer

import "time"

var origin = time.Now()

// Now is nanoseconds on the monotonic clock since the program started.
// time.Since of a time.Now() that carries a monotonic reading reads only the
// monotonic clock (time.Now() itself reads the wall clock too), so a timestamp
// costs one clock read, as in the other peers.
func Now() int64 { return int64(time.Since(origin)) }

// Spin busy-loops on the monotonic clock until ns nanoseconds have passed; it
// never sleeps (the contract's "busy loop of D µs").
func Spin(ns int64) {
	start := Now()
	for Now()-start < ns {
	}
}
