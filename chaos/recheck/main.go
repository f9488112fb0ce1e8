// Command recheck runs the chaos checker again on the outcome a chaos run
// saved (outcome.json in its log directory) and prints the report. It exits
// 1 when the report has violations, 2 when the file cannot be read.
//
//	go -C chaos run ./recheck /tmp/zklock-chaos.XXXXXX/outcome.json
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/zklock/zklock/chaos"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: recheck OUTCOME.json")
		return 2
	}
	r, err := chaos.LoadOutcome(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "recheck:", err)
		return 2
	}
	rep := chaos.Check(r)
	fmt.Fprint(stdout, rep)
	if !rep.OK() {
		return 1
	}
	return 0
}
