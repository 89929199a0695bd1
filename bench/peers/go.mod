module saturnpeers

go 1.19

// arena-go's two libraries come from Debian's source packages
// (golang-github-gorilla-websocket-dev, golang-github-andybalholm-brotli-dev):
// the builds are offline (build-go.sh: GOPROXY=off), so the modules resolve to
// the directories those packages install.
require (
	github.com/andybalholm/brotli v1.0.4
	github.com/gorilla/websocket v1.5.0
)

replace (
	github.com/andybalholm/brotli => /usr/share/gocode/src/github.com/andybalholm/brotli
	github.com/gorilla/websocket => /usr/share/gocode/src/github.com/gorilla/websocket
)
