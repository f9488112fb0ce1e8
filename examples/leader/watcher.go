package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

// run starts the candidates, then watches the election and kills each
// leader's process until one candidate is left.
func run() error {
	if os.Getenv("ZK_SERVERS") == "" {
		addrs, stop, err := devServer()
		if err != nil {
			return fmt.Errorf("ZK_SERVERS is not set and no local ZooKeeper could be started: %w", err)
		}
		defer stop()
		os.Setenv("ZK_SERVERS", strings.Join(addrs, ","))
		fmt.Println("watcher: started a throwaway ZooKeeper at", addrs[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := connect(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := zklock.NewElection(s, electionPath)
	if err != nil {
		return err
	}
	leaders, err := e.Observe(ctx)
	if err != nil {
		return err
	}
	procs, err := startCandidates()
	defer stopAll(procs)
	if err != nil {
		return err
	}
	return watch(ctx, leaders, procs)
}

// watch prints every leader and kills its process, until the last one.
func watch(ctx context.Context, leaders <-chan zklock.LeaderInfo, procs map[int]*exec.Cmd) error {
	term := 0
	var killed time.Time
	for info := range leaders {
		if info.Node == "" {
			fmt.Println("watcher: no leader")
			continue
		}
		term++
		fmt.Printf("watcher: term %d: %q leads, token %#x", term, info.Value, info.Token)
		if !killed.IsZero() {
			fmt.Printf(" (%.1fs after the kill)", time.Since(killed).Seconds())
		}
		fmt.Println()
		if len(procs) == 1 {
			fmt.Println("watcher: one candidate left; stopping it")
			return nil
		}
		_, after, _ := strings.Cut(string(info.Value), "pid=")
		pid, err := strconv.Atoi(after)
		if err != nil {
			return fmt.Errorf("leader value %q: %w", info.Value, err)
		}
		time.Sleep(time.Second) // let the leader notice it leads
		if p := procs[pid]; p != nil {
			fmt.Printf("watcher: SIGKILL pid %d\n", pid)
			_ = p.Process.Signal(syscall.SIGKILL)
			killed = time.Now()
			_ = p.Wait()
			delete(procs, pid)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("the session closed")
}

// startCandidates re-executes this program as each candidate. A candidate's
// stdin is a pipe from us: it stops when we exit, however we exit.
func startCandidates() (map[int]*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	procs := map[int]*exec.Cmd{}
	for i := 1; i <= candidates; i++ {
		cmd := exec.Command(self, "candidate", fmt.Sprintf("candidate-%d", i))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if _, err := cmd.StdinPipe(); err != nil {
			return procs, err
		}
		if err := cmd.Start(); err != nil {
			return procs, err
		}
		procs[cmd.Process.Pid] = cmd
	}
	return procs, nil
}

// stopAll asks the remaining candidates to stop and waits for them.
func stopAll(procs map[int]*exec.Cmd) {
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		_ = p.Wait()
	}
}

// exitWithParent cancels the candidate's work when its stdin (a pipe from
// the watcher) reaches EOF: the watcher is gone.
func exitWithParent(cancel context.CancelFunc) {
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
}
