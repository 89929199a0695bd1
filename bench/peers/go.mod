module saturnpeers

go 1.19

// arena-go's libraries (and golang.org/x/net's own x/sys and x/text) come from Debian's source packages
// (golang-github-gorilla-websocket-dev, golang-github-andybalholm-brotli-dev,
// golang-golang-x-net-dev, golang-golang-x-sys-dev, golang-golang-x-text-dev):
// the builds are offline (build-go.sh: GOPROXY=off), so the modules resolve to
// the directories those packages install.
require (
	github.com/andybalholm/brotli v1.0.4
	github.com/gorilla/websocket v1.5.0
	golang.org/x/net v0.7.0
)

require golang.org/x/text v0.7.0 // indirect

replace (
	github.com/andybalholm/brotli => /usr/share/gocode/src/github.com/andybalholm/brotli
	github.com/gorilla/websocket => /usr/share/gocode/src/github.com/gorilla/websocket
	golang.org/x/net => /usr/share/gocode/src/golang.org/x/net
	golang.org/x/sys => /usr/share/gocode/src/golang.org/x/sys
	golang.org/x/text => /usr/share/gocode/src/golang.org/x/text
)
