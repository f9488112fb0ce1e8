// Command bench runs zklock side by side with its peers (go-zookeeper's
// zk.Lock, Apache Curator, Kazoo, etcd's concurrency.Mutex and redsync) on
// real servers on 127.0.0.1, and writes results/results.json, results.md
// and chart.svg. Run it through `make bench` or `make bench-quick` from the
// repository root, which install the servers first.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/bench/report"
)

func main() {
	quick := flag.Bool("quick", false, "a run of under two minutes: fewer repeats, shorter windows, no 64+ clients")
	out := flag.String("out", "results", "directory for results.json, results.md and chart.svg")
	only := flag.String("impls", "", "comma-separated implementations to run (default all)")
	scen := flag.String("scenarios", "", "comma-separated scenario IDs to run (default all)")
	readme := flag.String("readme", "", "also replace the generated part of this Markdown file (between the bench markers: docs/benchmarks.md)")
	costs := flag.String("costs", "", "also replace the generated costs list of this Markdown file (between the bench:costs markers: README.md)")
	held := flag.Int("held", -1, "locks held at once on one session for the heap-per-held-lock figure (default 100000, quick 10000; 0 skips it)")
	note := flag.String("note", "", "a sentence added after the generated \"Measured ...\" line (say what else ran on the machine)")
	from := flag.String("from", "", "run nothing: render this results.json again (table, chart, -readme's page)")
	repeats := flag.Int("repeats", 0, "repeats per scenario (default 5, quick 3)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (the Go clients) to this file")
	blockprofile := flag.String("blockprofile", "", "write a goroutine blocking profile of this process to this file")
	mutexprofile := flag.String("mutexprofile", "", "write a mutex contention profile of this process to this file")
	allocprofile := flag.String("allocprofile", "", "write an allocation profile of this process to this file")
	flag.Parse()
	log.SetFlags(log.Ltime)
	defer startProfiles(*blockprofile, *mutexprofile, *allocprofile)()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	if *repeats > 0 {
		cfg.repeats = *repeats
	}
	if *held >= 0 {
		cfg.held = *held
	}
	cfg.scenarios = filter(cfg.scenarios, *only, *scen)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var run *report.Run
	var err error
	if *from != "" {
		run, err = load(*from)
	} else {
		run, err = benchmark(ctx, cfg)
	}
	if err == nil {
		err = write(run, *out, *readme, *costs, *note)
	}
	if err != nil {
		log.Print(err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	fmt.Print(report.Markdown(run))
}

func filter(ss []scenario, impls, ids string) []scenario {
	var out []scenario
	for _, s := range ss {
		if ids != "" && !slices.Contains(strings.Split(ids, ","), s.ID) {
			continue
		}
		if impls != "" {
			var keep []string
			for _, im := range s.Impls {
				if slices.Contains(strings.Split(impls, ","), im) {
					keep = append(keep, im)
				}
			}
			s.Impls = keep
		}
		if len(s.Impls) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// benchmark starts the servers and runs every scenario.
func benchmark(ctx context.Context, cfg config) (*report.Run, error) {
	began := time.Now()
	if err := buildJava(ctx); err != nil && needs(cfg, implCurator) {
		return nil, err
	}
	log.Printf("starting ZooKeeper, etcd and Redis on 127.0.0.1")
	e, err := startServers(ctx)
	if err != nil {
		return nil, err
	}
	defer e.close()
	b := &bench{e: e, cfg: cfg, ext: map[string]*extDriver{}}
	defer b.closeExt()
	run := &report.Run{Date: began.UTC(), Mode: cfg.mode, Machine: machine(), Repeats: cfg.repeats,
		Window: cfg.dur.String()}
	for _, sc := range cfg.scenarios {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rs, err := b.scenario(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.ID, err)
		}
		run.Scenarios = append(run.Scenarios, report.Scenario{ID: sc.ID, Title: sc.Title})
		run.Results = append(run.Results, rs...)
	}
	for _, im := range implOrder {
		if needs(cfg, im) {
			run.Impls = append(run.Impls, im)
		}
	}
	run.Versions = b.versions(ctx)
	if cfg.held > 0 {
		b.closeExt() // nothing but the held locks' session runs now
		b.ext = map[string]*extDriver{}
		if run.Held, err = heldScale(ctx, e, cfg.held); err != nil {
			return nil, fmt.Errorf("held: %w", err)
		}
	}
	run.Goals = report.Goals(run)
	run.Duration = time.Since(began).Round(time.Second).String()
	return run, nil
}

func needs(cfg config, impl string) bool {
	for _, s := range cfg.scenarios {
		if slices.Contains(s.Impls, impl) {
			return true
		}
	}
	return false
}

type bench struct {
	e   *servers
	cfg config
	ext map[string]*extDriver
}

// prepared is one implementation ready to run a scenario's trials.
type prepared struct {
	run   func(t trial) (report.Sample, error)
	close func()
}

func (b *bench) prepare(ctx context.Context, sc scenario, impl string) (*prepared, error) {
	path := fmt.Sprintf("/bench/%s/%s", sc.ID, impl)
	if gd, ok := goDrivers[impl]; ok {
		ws, closeFn, err := gd(ctx, b.e, sc, path)
		if err != nil {
			return nil, err
		}
		return &prepared{run: func(t trial) (report.Sample, error) { return drive(ctx, sc, ws, t) }, close: closeFn}, nil
	}
	d, err := b.driver(impl)
	if err != nil {
		return nil, err
	}
	if err := d.setup(sc, path, b.e.zkAddr); err != nil {
		return nil, err
	}
	return &prepared{
		run: func(t trial) (report.Sample, error) { return d.run(t, sc.Handoff) },
		close: func() {
			if err := d.teardown(); err != nil {
				log.Printf("%s teardown: %v", impl, err)
			}
		},
	}, nil
}

func (b *bench) driver(impl string) (*extDriver, error) {
	if d := b.ext[impl]; d != nil {
		return d, nil
	}
	argv, err := extCommand(impl)
	if err != nil {
		return nil, err
	}
	d, err := startExt(impl, argv)
	if err != nil {
		return nil, err
	}
	b.ext[impl] = d
	return d, nil
}

func (b *bench) closeExt() {
	for _, d := range b.ext {
		d.close()
	}
}

func isZK(impl string) bool {
	switch impl {
	case implRaw, implWrite, implZklock, implCohort, implQueue, implSeq, implGoZK, implCurator, implKazoo:
		return true
	}
	return false
}

// scenario prepares every implementation, then runs the repeats
// interleaved: each repeat runs every implementation once, starting one
// further along the list each time, so slow drift of the machine's load
// falls on all of them alike.
func (b *bench) scenario(ctx context.Context, sc scenario) ([]report.Result, error) {
	log.Printf("%s: preparing %s", sc.ID, strings.Join(sc.Impls, ", "))
	ps := make([]*prepared, len(sc.Impls))
	defer func() {
		for _, p := range ps {
			if p != nil {
				p.close()
			}
		}
	}()
	for i, im := range sc.Impls {
		p, err := b.prepare(ctx, sc, im)
		if err != nil {
			return nil, fmt.Errorf("prepare %s: %w", im, err)
		}
		ps[i] = p
	}
	bg, err := b.background(ctx, sc)
	if err != nil {
		return nil, err
	}
	samples := make([][]report.Sample, len(sc.Impls))
	failed := make([]bool, len(sc.Impls))
	for rep := range b.cfg.repeats {
		for j := range sc.Impls {
			i := (j + rep) % len(sc.Impls)
			if failed[i] {
				continue
			}
			s, err := b.trial(ctx, sc, sc.Impls[i], ps[i], rep, bg)
			if err != nil {
				// Reported in the results as errors; the other
				// implementations go on.
				log.Printf("%s %s: %v", sc.ID, sc.Impls[i], err)
				s.Errors = max(s.Errors, 1)
				failed[i] = true
			}
			samples[i] = append(samples[i], s)
		}
	}
	var out []report.Result
	for i, im := range sc.Impls {
		r := report.NewResult(sc.ID, im, samples[i])
		log.Printf("%s %-13s %8s/s (%s–%s)%s", sc.ID, im, report.Num(r.Rate.Median), report.Num(r.Rate.Min), report.Num(r.Rate.Max), reqNote(r))
		out = append(out, r)
	}
	return out, nil
}

func reqNote(r report.Result) string {
	s := ""
	if r.ReqPerAcq != nil {
		s += fmt.Sprintf(", %.2f req/acq", r.ReqPerAcq.Median)
	}
	if r.HandoffUS != nil {
		s += fmt.Sprintf(", handoff %s µs", report.Num(r.HandoffUS.Median))
	}
	if r.Violations > 0 {
		s += fmt.Sprintf(", %d VIOLATIONS", r.Violations)
	}
	return s
}

// idleWindow is how long the server's packet counter is watched with every
// client of a scenario connected and idle.
const idleWindow = time.Second

// background returns the packets per second the server receives from the
// scenario's connected clients while none of them works: keep-alive pings
// (go-zookeeper pings every third of the session timeout even when busy).
// Trials subtract it, so requests per acquisition count only the requests
// the acquisitions made.
func (b *bench) background(ctx context.Context, sc scenario) (float64, error) {
	if !slices.ContainsFunc(sc.Impls, isZK) {
		return 0, nil
	}
	p0, err := b.e.zkPackets(ctx)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(idleWindow)
	p1, err := b.e.zkPackets(ctx)
	if err != nil {
		return 0, err
	}
	return float64(p1-p0) / time.Since(t0).Seconds(), nil
}

// trial runs one repeat of impl and, for ZooKeeper clients, counts the
// requests the server received during it, less the background.
func (b *bench) trial(ctx context.Context, sc scenario, impl string, p *prepared, rep int, bg float64) (report.Sample, error) {
	t := trial{warm: b.cfg.warm, dur: b.cfg.dur, maxOps: 1 << 20, seed: uint64(rep + 1)}
	if sc.Handoff {
		t.minSeq = sc.Clients // every waiter has queued and been served once
	}
	var p0 int64
	began := time.Now()
	if isZK(impl) {
		var err error
		if p0, err = b.e.zkPackets(ctx); err != nil {
			return report.Sample{}, err
		}
	}
	_, inProcess := goDrivers[impl]
	cpu0 := cpuTime()
	s, err := p.run(t)
	if err != nil {
		return s, err
	}
	if inProcess && s.Total > 0 {
		// Only this implementation's clients run in this process during
		// the trial (the servers and the Java and Python clients are other
		// processes), so the process's CPU time is theirs, Go runtime and
		// go-zookeeper included.
		s.CPUUS = float64((cpuTime() - cpu0).Microseconds()) / float64(s.Total)
	}
	if isZK(impl) && s.Total > 0 {
		p1, err := b.e.zkPackets(ctx)
		if err != nil {
			return s, err
		}
		s.ReqPerAcq = (float64(p1-p0) - bg*time.Since(began).Seconds()) / float64(s.Total)
	}
	return s, nil
}

func load(path string) (*report.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	run := &report.Run{}
	if err := json.Unmarshal(b, run); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run.Goals = report.Goals(run)
	return run, nil
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores (%s), %s/%s, loopback", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH)
}

func write(run *report.Run, dir, readme, costs, note string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	md := report.Markdown(run)
	for name, data := range map[string][]byte{
		"results.json": append(js, '\n'),
		"results.md":   []byte(md),
		"chart.svg":    report.SVG(run),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	log.Printf("wrote %s/results.json, results.md and chart.svg (%s run took %s)", dir, run.Mode, run.Duration)
	if readme != "" {
		if err := updateReadme(readme, note, filepath.Join(dir, "chart.svg"), run); err != nil {
			return err
		}
	}
	if costs != "" {
		return updateCosts(costs, note, run)
	}
	return nil
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
