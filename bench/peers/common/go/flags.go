package peer

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Flags are the common flags (--threads N --samples N --warmup N --scenario A,B),
// the program's own --key value options, and the positional arguments. Flags and
// positional arguments may come in any order (ring-go N LAPS --samples 3).
type Flags struct {
	Threads, Samples, Warmup int
	scenarios                []string // nil: all
	Options                  map[string]string
	Positional               []string
}

// Usage is printed with any error from ParseFlags.
var Usage = "[--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]"

func bad(why string) {
	fmt.Fprintf(os.Stderr, "%s: %s\nusage: %s %s\n", program(), why, program(), Usage)
	os.Exit(2)
}

func program() string {
	p := os.Args[0]
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// ParseFlags parses os.Args. options lists the program's own --key flags (each
// takes a value) with their defaults. --threads defaults to the CPUs in the
// affinity mask (runtime.NumCPU); GOMAXPROCS is set to it. Exits 2 on bad usage.
func ParseFlags(options map[string]string) *Flags {
	f := &Flags{Threads: runtime.NumCPU(), Samples: 5, Warmup: 1, Options: map[string]string{}}
	for k, v := range options {
		f.Options[k] = v
	}
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.Positional = append(f.Positional, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		value, inline := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, value, inline = name[:j], name[j+1:], true
		}
		if !inline {
			if i+1 >= len(args) {
				bad("--" + name + " takes a value")
			}
			i++
			value = args[i]
		}
		number := func() int {
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				bad("--" + name + " takes a whole number")
			}
			return n
		}
		switch name {
		case "threads":
			f.Threads = number()
		case "samples":
			f.Samples = number()
		case "warmup":
			f.Warmup = number()
		case "scenario":
			for _, s := range strings.Split(value, ",") {
				f.scenarios = append(f.scenarios, strings.TrimSpace(s))
			}
		default:
			if _, ok := f.Options[name]; !ok {
				bad("unknown flag --" + name)
			}
			f.Options[name] = value
		}
	}
	if f.Threads < 1 || f.Samples < 1 {
		bad("--threads and --samples must be at least 1")
	}
	runtime.GOMAXPROCS(f.Threads)
	return f
}

// Wants reports whether scenario name was asked for (no --scenario: all).
func (f *Flags) Wants(name string) bool {
	if f.scenarios == nil {
		return true
	}
	for _, s := range f.scenarios {
		if s == name || s == "all" {
			return true
		}
	}
	return false
}

// CheckScenarios exits 2 when --scenario names one not in known.
func (f *Flags) CheckScenarios(known []string) {
	for _, s := range f.scenarios {
		ok := s == "all"
		for _, k := range known {
			ok = ok || s == k
		}
		if !ok {
			bad(fmt.Sprintf("unknown scenario %s (known: %s)", s, strings.Join(known, ",")))
		}
	}
}

// ServerFlags parses a server's --port P [--threads W] and sets GOMAXPROCS to W
// (default: the CPUs in the affinity mask).
func ServerFlags() (port, threads int) {
	Usage = "--port P [--threads W]"
	port, threads = -1, runtime.NumCPU()
	args := os.Args[1:]
	if len(args)%2 != 0 {
		bad("flags take a value each")
	}
	for i := 0; i < len(args); i += 2 {
		n, err := strconv.Atoi(args[i+1])
		if err != nil {
			bad(args[i] + " takes a number")
		}
		switch strings.TrimLeft(args[i], "-") {
		case "port":
			port = n
		case "threads":
			threads = n
		default:
			bad("unknown flag " + args[i])
		}
	}
	if port < 0 || port > 65535 || threads < 1 {
		bad("--port P (0-65535) is required, --threads W must be at least 1")
	}
	runtime.GOMAXPROCS(threads)
	return port, threads
}
