package main

import (
	"bytes"
	"os"
	"strconv"
)

// A process zklock's command started may leave the command's process group
// (setsid, setpgid): a signal to the group misses it. On Linux zklock and
// its supervisor are child subreapers, so every process the command starts
// stays a descendant of theirs until it ends, orphans included; they find
// those processes by walking /proc. Elsewhere there is no /proc to walk and
// only the group is signalled.

// procInfo is what the walk needs of a process.
type procInfo struct{ ppid, pgid int }

// readProcs reads the parent and process group of every process in /proc;
// it returns nil where there is no /proc.
func readProcs() map[int]procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	procs := make(map[int]procInfo, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if pi, ok := readStat(pid); ok {
			procs[pid] = pi
		}
	}
	return procs
}

// readStat parses /proc/PID/stat: the fields after the command name, which
// is in parentheses and may hold anything, are state, ppid, pgrp.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || string(f[0]) == "Z" { // a zombie has ended: nothing to signal
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	return procInfo{ppid, pgid}, err1 == nil && err2 == nil
}

// descendants returns the live processes under root (not root itself),
// with their process groups.
func descendants(root int) map[int]int {
	procs := readProcs()
	children := make(map[int][]int, len(procs))
	for pid, pi := range procs {
		children[pi.ppid] = append(children[pi.ppid], pid)
	}
	out := map[int]int{}
	todo := []int{root}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, c := range children[p] {
			if _, seen := out[c]; !seen {
				out[c] = procs[c].pgid
				todo = append(todo, c)
			}
		}
	}
	return out
}
