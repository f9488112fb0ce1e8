package interop_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/peerlib"
)

// Where Debian's packages put what the drivers need.
const (
	curatorJar = peerlib.CuratorJar
	slf4jNop   = peerlib.Slf4jNop
	python     = peerlib.Python
)

const installHint = "install them with: sudo scripts/install-deps.sh (or make deps)"

// classDir is where Driver.java is compiled to, once per test binary; it is
// removed by TestMain.
var classDir string

var compiled struct {
	once sync.Once
	err  error
}

var (
	javaTool   = peerlib.JavaTool
	fileExists = peerlib.Exists
)

// needCurator fails the test unless a JDK and Curator are installed, and
// compiles the Java driver on first use.
func needCurator(t *testing.T) {
	t.Helper()
	compiled.once.Do(func() { compiled.err = compileDriver() })
	if compiled.err != nil {
		t.Fatalf("Curator driver: %v; %s", compiled.err, installHint)
	}
}

func compileDriver() error {
	javac, err := javaTool("javac")
	if err != nil {
		return fmt.Errorf("%w (a JDK, not only a runtime, is needed)", err)
	}
	if _, err := javaTool("java"); err != nil {
		return err
	}
	if !fileExists(curatorJar) {
		return fmt.Errorf("%s is missing (Debian package libcurator-recipes-java)", curatorJar)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, javac, "-Xlint:all,-path", "-Werror", "-cp", curatorJar,
		"-d", classDir, filepath.Join("java", "Driver.java"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("javac: %v\n%s", err, out)
	}
	return nil
}

// javaArgs returns the command line that runs the driver with args. The JVM
// flags trade peak speed for startup time and memory: each driver makes a
// handful of ZooKeeper requests on a shared two-core machine.
func javaArgs(args []string) (string, []string, error) {
	java, err := javaTool("java")
	if err != nil {
		return "", nil, err
	}
	cp := []string{classDir, curatorJar}
	if fileExists(slf4jNop) {
		cp = append(cp, slf4jNop)
	}
	jvm := []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx96m", "-Xss512k",
		"-cp", strings.Join(cp, string(os.PathListSeparator)), "Driver"}
	return java, append(jvm, args...), nil
}

var kazooChecked struct {
	once sync.Once
	err  error
}

// needKazoo fails the test unless Debian's python3 imports Kazoo.
func needKazoo(t *testing.T) {
	t.Helper()
	kazooChecked.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, python, "-c", "import kazoo").CombinedOutput()
		var ee *exec.ExitError
		switch {
		case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
			kazooChecked.err = fmt.Errorf("%s is missing", python)
		case errors.As(err, &ee):
			kazooChecked.err = fmt.Errorf("%s cannot import kazoo (Debian package python3-kazoo): %s", python, strings.TrimSpace(string(out)))
		case err != nil:
			kazooChecked.err = err
		}
	})
	if kazooChecked.err != nil {
		t.Fatalf("Kazoo driver: %v; %s", kazooChecked.err, installHint)
	}
}
