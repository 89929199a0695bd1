// Command spawn-go runs the `spawn` suite of docs/workloads.md with goroutines.
//
//	spawn-go [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//
// Everything runs in goroutines (the main goroutine is one); GOMAXPROCS = --threads,
// 1 for yield_pingpong ("two tasks on one worker"). See README.md.
package main

import (
	"fmt"
	"os"

	peer "saturnpeers/common/go"
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "spawn-go: "+format+"\n", a...)
	os.Exit(1)
}

func header(scenario string) *peer.Line {
	return peer.NewLine().S("suite", "spawn").S("scenario", scenario).S("runtime", "go")
}

func main() {
	f := peer.ParseFlags(map[string]string{"child": ""})
	if f.Options["child"] == "suspended_100k" {
		suspendedChild()
		return
	}
	f.CheckScenarios([]string{"spawn_join_1m", "suspended_100k", "yield_pingpong"})
	if f.Wants("spawn_join_1m") {
		runSpawnJoin(f)
	}
	if f.Wants("suspended_100k") {
		runSuspended(f)
	}
	if f.Wants("yield_pingpong") {
		runPingpong(f)
	}
}
