package main

import "time"

// body is what a task does before its no-op.
type body struct {
	spinNs     int64 // a busy loop of this long (0: none)
	everyFifth bool  // task i spins 1 ms when i%5 == 0 (mixed_fast_slow)
}

// scenario is one row of docs/workloads.md's sched matrix.
type scenario struct {
	name       string
	tasks      int
	submitters int   // external submitters (flat and burst shapes)
	parents    int   // > 0: the fan-out shape, each parent spawns children
	children   int   // children per parent
	gapNs      int64 // > 0: the burst shape, half, drain, sleep gap, half, drain
	body       body
}

const largest = 1_000_000

func scenarios() []scenario {
	us := int64(time.Microsecond)
	return []scenario{
		{name: "flood_1m", tasks: 1_000_000, submitters: 1},
		{name: "contended_spawn_8x", tasks: 100_000, submitters: 8},
		{name: "cpu_work_10us", tasks: 10_000, submitters: 1, body: body{spinNs: 10 * us}},
		{name: "cpu_work_100us", tasks: 2_000, submitters: 1, body: body{spinNs: 100 * us}},
		{name: "contended_cpu_10us", tasks: 10_000, submitters: 4, body: body{spinNs: 10 * us}},
		{name: "nested_fanout_4x", tasks: 10_000, submitters: 1, parents: 2_000, children: 4},
		{name: "burst_drain_burst", tasks: 4_000, submitters: 1, gapNs: int64(10 * time.Millisecond), body: body{spinNs: 50 * us}},
		{name: "mixed_fast_slow", tasks: 5_000, submitters: 1, body: body{everyFifth: true}},
	}
}
