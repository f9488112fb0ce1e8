// Command zklock runs a program under a distributed lock, semaphore slot or
// leadership held in ZooKeeper, shows who holds a lock and who waits, and
// lists the locks, semaphores and elections under a path.
//
//	zklock run [flags] PATH -- CMD [ARGS...]
//	zklock status [flags] PATH
//	zklock status --watch [flags] PATH
//	zklock ls [flags] PREFIX
//	zklock revoke [flags] PATH
//	zklock break [--force] [flags] PATH
//	zklock elect [flags] PATH VALUE -- CMD [ARGS...]
//	zklock elect --observe [flags] PATH
//	zklock dev-server [--size N]
//	zklock help [COMMAND]
//	zklock --version
//
// Run 'zklock help' for the flags and the exit codes. Install it with
//
//	go install github.com/zklock/zklock/cmd/zklock@latest
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == supervisorArg {
		os.Exit(superviseMain(os.Args[2:])) // see superviseMain
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	c := &cli{stdout: stdout, stderr: stderr, name: args[0], tty: isTTY(stderr)}
	switch args[0] {
	case "run":
		return c.run(args[1:])
	case "status":
		return c.status(args[1:])
	case "ls":
		return c.ls(args[1:])
	case "revoke":
		return c.revoke(args[1:])
	case "break":
		return c.breakLock(args[1:])
	case "elect":
		return c.elect(args[1:])
	case "dev-server":
		return c.devServer(args[1:])
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version())
		return exitOK
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	c.name = ""
	return c.usagef("unknown command %q", args[0])
}
