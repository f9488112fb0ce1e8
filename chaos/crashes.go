package chaos

import (
	"strings"
)

// upstreamPkg is the ZooKeeper client zklock is built on.
const upstreamPkg = "github.com/go-zookeeper/zk."

// Crashes scans a worker's output (name says whose) for panics, fatal errors
// and data race reports. A race whose two conflicting accesses both happen
// inside go-zookeeper is returned apart, as upstream: go-zookeeper v1.0.4
// races on Conn.lastZxid between recvLoop and sendSetWatches on every
// reconnect with watches (go-zookeeper/zk#35, samuel/go-zookeeper#178),
// which zklock cannot fix and which must not hide a race of its own.
func Crashes(name, out string) (ours, upstream []string) {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") {
			ours = append(ours, name+": "+line)
		}
	}
	for _, block := range strings.Split(out, "==================\n")[1:] {
		if !strings.HasPrefix(block, "WARNING: DATA RACE") {
			continue
		}
		frames := accessFrames(block)
		if inside(frames, upstreamPkg) {
			upstream = append(upstream, name+": "+strings.Join(frames, " vs "))
		} else {
			ours = append(ours, name+": WARNING: DATA RACE at "+strings.Join(frames, " vs "))
		}
	}
	return ours, upstream
}

// accessFrames returns the innermost frame of each access a race report
// names ("Read at", "Previous write at"...).
func accessFrames(block string) []string {
	var frames []string
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		if (strings.HasPrefix(l, "Read at") || strings.HasPrefix(l, "Write at") ||
			strings.HasPrefix(l, "Previous read at") || strings.HasPrefix(l, "Previous write at") ||
			strings.HasPrefix(l, "Atomic ") || strings.HasPrefix(l, "Previous atomic ")) && i+1 < len(lines) {
			frames = append(frames, strings.TrimSpace(lines[i+1]))
		}
	}
	return frames
}

// inside reports whether every frame is in package pkg (and there are some).
func inside(frames []string, pkg string) bool {
	for _, f := range frames {
		if !strings.HasPrefix(f, pkg) {
			return false
		}
	}
	return len(frames) > 0
}
