// http_client-go: the `http-client` suite's Go peer (README.md). C goroutines loop
// client.Get(url) on one shared net/http Client whose Transport keeps up to C
// keep-alive connections to the host, for D seconds; every answer is checked (status
// 200, exact body), anything else is an error. GOMAXPROCS = --threads. Prints the
// suite's JSON line with the process's user+sys CPU over the measured window.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func cpu() (float64, float64) {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return float64(u.Utime.Sec) + float64(u.Utime.Usec)/1e6, float64(u.Stime.Sec) + float64(u.Stime.Usec)/1e6
}

func main() {
	url := flag.String("url", "", "URL to GET")
	conc := flag.Int("concurrency", 64, "concurrent requests")
	dur := flag.Float64("duration-s", 5, "seconds")
	threads := flag.Int("threads", 2, "GOMAXPROCS")
	want := flag.String("body", "Hello, World!", "expected body")
	flag.Parse()
	if *url == "" || *conc < 1 || *dur <= 0 || *threads < 1 {
		fmt.Fprintln(os.Stderr, "usage: http_client-go --url U [--concurrency C] [--duration-s D] [--threads T]")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*threads)
	tr := &http.Transport{
		MaxIdleConns:        *conc,
		MaxIdleConnsPerHost: *conc,
		MaxConnsPerHost:     *conc,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true, // like the other clients: no Accept-Encoding
	}
	client := &http.Client{Transport: tr}
	var ok, bad atomic.Uint64
	u0, s0 := cpu()
	t0 := time.Now()
	end := t0.Add(time.Duration(*dur * float64(time.Second)))
	var wg sync.WaitGroup
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				resp, err := client.Get(*url)
				if err != nil {
					if bad.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "http_client-go:", err)
					}
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || string(body) != *want {
					if bad.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "http_client-go: bad answer", resp.StatusCode, err)
					}
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0).Seconds()
	u1, s1 := cpu()
	n, e := ok.Load(), bad.Load()
	per := 0.0
	if n > 0 {
		per = (u1 - u0 + s1 - s0) * 1e6 / float64(n)
	}
	fmt.Printf("{\"suite\":\"http-client\",\"scenario\":\"get_keepalive_%d\",\"runtime\":\"go\",\"threads\":%d,"+
		"\"concurrency\":%d,\"requests\":%d,\"errors\":%d,\"wall_s\":%.3f,\"ops_per_sec\":%.0f,"+
		"\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_us_per_req\":%.3f}\n",
		*conc, *threads, *conc, n, e, wall, float64(n)/wall, u1-u0, s1-s0, per)
	if e != 0 || n == 0 {
		os.Exit(1)
	}
}
