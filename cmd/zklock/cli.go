package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/zk"
)

// cli is one invocation of a subcommand: where it writes, its name, for
// messages, and whether stderr is a terminal (for progress lines).
type cli struct {
	stdout, stderr io.Writer
	name           string
	tty            bool
}

// prefix is how every message of the subcommand starts.
func (c *cli) prefix() string {
	if c.name == "" {
		return "zklock: "
	}
	return "zklock " + c.name + ": "
}

// failf reports an error on one line, with a hint after it when there is
// one, and returns code.
func (c *cli) failf(code int, hint, format string, args ...any) int {
	msg := oneLine(fmt.Sprintf(format, args...))
	if hint != "" {
		msg += " (" + hint + ")"
	}
	fmt.Fprintln(c.stderr, c.prefix()+msg)
	return code
}

// usagef reports a usage error and points to the help.
func (c *cli) usagef(format string, args ...any) int {
	hint := "see 'zklock help'"
	if c.name != "" {
		hint = "see 'zklock help " + c.name + "'"
	}
	return c.failf(exitUsage, hint, format, args...)
}

// warnf reports something that does not change the exit code.
func (c *cli) warnf(format string, args ...any) {
	fmt.Fprintln(c.stderr, c.prefix()+oneLine(fmt.Sprintf(format, args...)))
}

// oneLine keeps a message on one line and drops the library's "zklock: "
// prefixes, which the command's own prefix replaces.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "zklock: ", "")
	return strings.Join(strings.Fields(s), " ")
}

// newFlagSet returns a FlagSet that reports errors to the caller instead of
// printing them, so that run can print them on one line.
func (c *cli) newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("zklock "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args and turns a flag error into an exit code: 0 and false
// for -h (the subcommand's help was printed), exitUsage and false for a bad
// flag.
func (c *cli) parse(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return help([]string{c.name}, c.stdout, c.stderr), false
	}
	if err != nil {
		return c.usagef("%s", flagErrorName.ReplaceAllString(err.Error(), "$1--$2")), false
	}
	return 0, true
}

// flagErrorName finds a flag's name in the flag package's errors, which
// write it "-name": help and the docs write "--name" (and "-n", the one
// one-letter flag, stays).
var flagErrorName = regexp.MustCompile(`(for flag |for |defined: |argument: )-([A-Za-z0-9][A-Za-z0-9-]+)`)

// opFailed reports a failed operation: a usage error for an argument the
// library refused (a bad path, data too large), otherwise exitError.
func (c *cli) opFailed(err error) int {
	// Not every ErrInvalidArgument: a semaphore's limit mismatch, say, is
	// no usage error.
	if errors.Is(err, errs.ErrInvalidPath) || errors.Is(err, errs.ErrDataTooLarge) {
		return c.usagef("%v", err)
	}
	if errors.Is(err, zk.ErrNoAuth) {
		return c.failf(exitError, "the nodes belong to other credentials: check --auth, --auth-file or $"+envAuth,
			"%v", err)
	}
	return c.failf(exitError, "", "%v", err)
}
