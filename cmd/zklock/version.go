package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version describes the binary from its build information: the module's
// version (for go install github.com/zklock/zklock/cmd/zklock@latest the
// pseudo-version of main's commit, v0.0.0-<UTC time>-<commit>, while the
// repository has no tag, or the tag once one is published; the go command
// stamps a build in a checkout from its tag or commit, or leaves "(devel)"), the commit it was built from when the go command
// recorded it, and the Go toolchain.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("zklock (unknown version) %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " (commit " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return fmt.Sprintf("zklock %s %s %s/%s", v, bi.GoVersion, runtime.GOOS, runtime.GOARCH)
}
