package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// LibCurator marks the events of a Curator worker (Event.Lib).
const LibCurator = "curator"

// EnvSessionMS gives a Curator worker its session timeout in milliseconds.
const EnvSessionMS = "ZKLOCK_CHAOS_SESSION_MS"

// Where Debian's packages put what the Curator worker needs.
const (
	curatorJar = "/usr/share/java/curator-recipes.jar" // its manifest's Class-Path names the rest
	slf4jNop   = "/usr/share/java/slf4j-nop.jar"       // silences Curator's and ZooKeeper's logging
)

// CuratorPrimitives are the workloads a Curator worker runs, on the same
// paths and counters as the zklock workers'.
var CuratorPrimitives = []string{"mutex", "rwmutex", "semaphore"}

// javaTool returns $JAVA_HOME/bin/name or name found on PATH.
func javaTool(name string) (string, error) {
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		if p := filepath.Join(jh, "bin", name); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no %s in $JAVA_HOME/bin or on PATH", name)
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// compileCurator compiles java/CuratorWorker.java (next to this file) into
// dir and returns the command line prefix that runs it.
func compileCurator(ctx context.Context, dir string) ([]string, error) {
	javac, err := javaTool("javac")
	if err != nil {
		return nil, fmt.Errorf("%w (a JDK is needed for Curator workers: make deps)", err)
	}
	java, err := javaTool("java")
	if err != nil {
		return nil, err
	}
	if !fileExists(curatorJar) {
		return nil, fmt.Errorf("%s is missing (Debian package libcurator-recipes-java: make deps)", curatorJar)
	}
	_, self, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(self), "java", "CuratorWorker.java")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, javac, "-Xlint:all,-path", "-Werror", "-cp", curatorJar, "-d", dir, src).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("javac %s: %v\n%s", src, err, out)
	}
	cp := []string{dir, curatorJar}
	if fileExists(slf4jNop) {
		cp = append(cp, slf4jNop)
	}
	return []string{java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-Xss512k",
		"-cp", strings.Join(cp, string(os.PathListSeparator)), "CuratorWorker"}, nil
}

// sessionMS is the Curator worker's session timeout setting.
func sessionMS() string { return strconv.FormatInt(SessionTimeout.Milliseconds(), 10) }
