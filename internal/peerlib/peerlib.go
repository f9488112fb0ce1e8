// Package peerlib finds what the Curator and Kazoo programs of the interop
// tests and the chaos suite need: a JDK, Debian's Curator jars and
// Debian's python3 with Kazoo (scripts/install-deps.sh installs them).
package peerlib

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Where Debian's packages put them.
const (
	CuratorJar = "/usr/share/java/curator-recipes.jar" // its manifest's Class-Path names the rest
	Slf4jNop   = "/usr/share/java/slf4j-nop.jar"       // silences Curator's and ZooKeeper's logging
	Python     = "/usr/bin/python3"                    // Debian's python3-kazoo is installed for it, not for a pyenv python3
)

// JavaTool returns $JAVA_HOME/bin/name, or name found on PATH.
func JavaTool(name string) (string, error) {
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		if p := filepath.Join(jh, "bin", name); Exists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no %s in $JAVA_HOME/bin or on PATH", name)
	}
	return p, nil
}

// Exists reports whether path exists.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
