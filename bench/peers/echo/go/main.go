// Command echo-go is the `echo` suite's server (docs/workloads.md) on Go's net
// package.
//
//	echo-go --port P [--threads W]
//
// GOMAXPROCS = W. One listener on 127.0.0.1:P, a goroutine per connection with a
// 16 KiB buffer: read, write back exactly what was read, until EOF. Go sets
// TCP_NODELAY on every TCP connection by default. See README.md.
package main

import (
	"fmt"
	"net"
	"os"
	"time"

	peer "saturnpeers/common/go"
)

func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 16<<10)
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

func main() {
	port, _ := peer.ServerFlags()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo-go:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			// Out of file descriptors, usually: back off as net/http does.
			fmt.Fprintln(os.Stderr, "echo-go: accept:", err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		go echo(c)
	}
}
