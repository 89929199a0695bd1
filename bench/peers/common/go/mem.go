package peer

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// PeakRSSKiB is getrusage(RUSAGE_SELF).ru_maxrss, KiB.
func PeakRSSKiB() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Maxrss
}

// RSSBytes is the resident set size now: /proc/self/statm's second field × page size.
func RSSBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		panic(err)
	}
	fields := strings.Fields(string(b))
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return pages * int64(os.Getpagesize())
}
