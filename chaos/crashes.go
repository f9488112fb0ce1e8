package chaos

import (
	"strings"
)

// Crashes scans a worker's output (name says whose) for panics, fatal errors
// and data race reports, each a violation: every goroutine of a zklock
// worker runs zklock's own code, its ZooKeeper client included.
func Crashes(name, out string) (ours []string) {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") {
			ours = append(ours, name+": "+line)
		}
	}
	for _, block := range strings.Split(out, "==================\n")[1:] {
		if !strings.HasPrefix(block, "WARNING: DATA RACE") {
			continue
		}
		ours = append(ours, name+": WARNING: DATA RACE at "+strings.Join(accessFrames(block), " vs "))
	}
	return ours
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
