// Command tls-go is the `tls` suite's server (docs/workloads.md) on Go's crypto/tls:
// a TLS echo server.
//
//	tls-go --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem
//
// GOMAXPROCS = W. One listener on 127.0.0.1:P (tls.Listen, crypto/tls's defaults: TLS
// 1.2 and 1.3, session tickets on, as a Go service ships), a goroutine per connection
// with a 64 KiB buffer: read, write back exactly what was read, until EOF. See README.md.
package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"
)

func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func bad(why string) {
	fmt.Fprintln(os.Stderr, "tls-go:", why)
	fmt.Fprintln(os.Stderr, "usage: tls-go --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem")
	os.Exit(2)
}

func main() {
	port, threads := -1, runtime.NumCPU()
	cert, key := "", ""
	args := os.Args[1:]
	if len(args)%2 != 0 {
		bad("flags take a value each")
	}
	for i := 0; i < len(args); i += 2 {
		switch args[i] {
		case "--port", "--threads":
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				bad(args[i] + " takes a number")
			}
			if args[i] == "--port" {
				port = n
			} else {
				threads = n
			}
		case "--tls-cert":
			cert = args[i+1]
		case "--tls-key":
			key = args[i+1]
		default:
			bad("unknown flag " + args[i])
		}
	}
	if port < 0 || port > 65535 || threads < 1 || cert == "" || key == "" {
		bad("--port, --tls-cert and --tls-key are required")
	}
	runtime.GOMAXPROCS(threads)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tls-go:", err)
		os.Exit(1)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	ln, err := tls.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tls-go:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "tls-go: accept:", err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		go echo(c)
	}
}
