package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/bench/report"
)

// extDriver is a driver in another language, run as a child process that
// speaks a line protocol on stdin and stdout:
//
//	setup kind=mutex clients=16 sessions=16 locks=1 limit=2 readpct=90 path=/p connect=host:port
//	run warm_ms=300 dur_ms=1000 max_ops=N min_seq=0 handoff=0 seed=1
//	teardown
//
// Each request gets one line back: "ok key=value ..." or "err message"; a
// run's keys are ops, total, rate, handoff_us, p50_us, p99_us, max_us
// (acquire latency; a driver may leave them out: not measured),
// violations, errors and first_error. The driver exits at end of input. Timing and checks are the Go driver's
// (drive): a closed loop, a window after a warm-up, exclusion verified by
// the driver across its threads.
type extDriver struct {
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   chan string
	stderr  *bytes.Buffer
	exited  chan struct{}
	version string
}

func startExt(name string, argv []string) (*extDriver, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &extDriver{name: name, cmd: cmd, in: in, lines: make(chan string, 1), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = &limitedWriter{w: d.stderr, n: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s driver: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	}()
	go func() { _ = cmd.Wait(); close(d.exited) }()
	hello, err := d.read(2 * time.Minute)
	if err != nil {
		d.close()
		return nil, err
	}
	d.version = strings.TrimPrefix(hello, "ready ")
	return d, nil
}

func (d *extDriver) read(timeout time.Duration) (string, error) {
	select {
	case l, ok := <-d.lines:
		if !ok {
			<-d.exited
			return "", fmt.Errorf("%s driver exited: %s", d.name, tail(d.stderr.Bytes()))
		}
		return l, nil
	case <-time.After(timeout):
		_ = d.cmd.Process.Kill()
		return "", fmt.Errorf("%s driver: no reply within %v", d.name, timeout)
	}
}

// call sends one request and parses the "ok k=v..." reply.
func (d *extDriver) call(req string, timeout time.Duration) (map[string]string, error) {
	if _, err := io.WriteString(d.in, req+"\n"); err != nil {
		return nil, fmt.Errorf("%s driver: %w", d.name, err)
	}
	line, err := d.read(timeout)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "ok" {
		return nil, fmt.Errorf("%s driver: %s: %s", d.name, strings.Fields(req)[0], line)
	}
	kv := make(map[string]string)
	for _, p := range f[1:] {
		k, v, _ := strings.Cut(p, "=")
		kv[k] = v
	}
	return kv, nil
}

func (d *extDriver) close() {
	d.in.Close()
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

func (d *extDriver) setup(sc scenario, path, connect string) error {
	_, err := d.call(fmt.Sprintf("setup kind=%s clients=%d sessions=%d locks=%d limit=%d readpct=%d path=%s connect=%s",
		sc.Kind, sc.Clients, sc.sessions(), sc.locks(), sc.Limit, sc.ReadPct, path, connect), 5*time.Minute)
	return err
}

func (d *extDriver) run(t trial, handoff bool) (report.Sample, error) {
	h := 0
	if handoff {
		h = 1
	}
	kv, err := d.call(fmt.Sprintf("run warm_ms=%d dur_ms=%d max_ops=%d min_seq=%d handoff=%d seed=%d",
		t.warm.Milliseconds(), t.dur.Milliseconds(), t.maxOps, t.minSeq, h, t.seed), 5*time.Minute)
	if err != nil {
		return report.Sample{}, err
	}
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(kv[k], 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	s := report.Sample{Rate: num("rate"), HandoffUS: num("handoff_us"), ReqPerAcq: math.NaN(), CPUUS: math.NaN(),
		P50US: num("p50_us"), P99US: num("p99_us"), MaxUS: num("max_us"),
		Ops: int(num("ops")), Total: int(num("total")), Violations: int(num("violations")), Errors: int(num("errors"))}
	if s.Errors > 0 {
		return s, fmt.Errorf("%s driver: %d errors, first: %s", d.name, s.Errors, strings.ReplaceAll(kv["first_error"], "_", " "))
	}
	return s, nil
}

func (d *extDriver) teardown() error {
	_, err := d.call("teardown", 2*time.Minute)
	return err
}

// buildDir holds the compiled Java driver; it is not committed.
func buildDir() string { return filepath.Join(".build") }

// curatorJars are Debian's libcurator-recipes-java and its dependencies
// (their manifests name the rest).
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-nop.jar",
}

func curatorClasspath() string {
	var cp []string
	for _, j := range curatorJars {
		cp = append(cp, filepath.Join("/usr/share/java", j))
	}
	return strings.Join(cp, ":")
}

// buildJava compiles java/CuratorBench.java when its class is missing or
// older than the source.
func buildJava(ctx context.Context) error {
	src := filepath.Join("java", "CuratorBench.java")
	class := filepath.Join(buildDir(), "CuratorBench.class")
	si, err := os.Stat(src)
	if err != nil {
		return err
	}
	if ci, err := os.Stat(class); err == nil && ci.ModTime().After(si.ModTime()) {
		return nil
	}
	for _, j := range curatorJars {
		if _, err := os.Stat(filepath.Join("/usr/share/java", j)); err != nil {
			return fmt.Errorf("%w (run scripts/install-deps.sh --bench)", err)
		}
	}
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", buildDir(), "-cp", curatorClasspath(), src).CombinedOutput()
	if err != nil {
		return fmt.Errorf("javac: %v: %s", err, tail(out))
	}
	return nil
}

func extCommand(name string) ([]string, error) {
	switch name {
	case implCurator:
		return []string{"java", "-Xmx1g", "-XX:+UseSerialGC", "-cp", buildDir() + ":" + curatorClasspath(), "CuratorBench"}, nil
	case implKazoo:
		// Debian's python3-kazoo is importable by the system Python only.
		return []string{"/usr/bin/python3", filepath.Join("python", "kazoo_bench.py")}, nil
	}
	return nil, errors.New("no driver for " + name)
}

type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
