package main

import (
	"flag"
	"strings"
)

// One grammar for every subcommand:
//
//	zklock CMD [FLAGS] POSITIONAL... [FLAGS] [-- COMMAND ARGS...]
//
// Flags may come before, between or after the positional arguments (PATH,
// VALUE); a "--" ends them. For run and elect, the first argument past the
// positional ones that is not a flag starts the command, "--" or not, and
// what follows it is the command's. A flag that does not apply to what was
// asked is refused (refuse), not ignored.

// parseArgs parses args with fs and returns the positional arguments named
// by names and, when withCmd, the command; otherwise it reports a usage
// error and returns its code and false.
func (c *cli) parseArgs(fs *flag.FlagSet, args, names []string, withCmd bool) (pos, cmd []string, code int, ok bool) {
	for {
		if code, ok := c.parse(fs, args); !ok {
			return nil, nil, code, false
		}
		rest := fs.Args()
		ended := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
		if ended || len(rest) == 0 {
			n := min(len(names)-len(pos), len(rest))
			pos, rest = append(pos, rest[:n]...), rest[n:]
			cmd = rest
			break
		}
		if len(pos) == len(names) {
			cmd = rest // a command without "--", or an extra argument
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	switch {
	case len(pos) < len(names):
		return nil, nil, c.usagef("missing %s", strings.Join(names[len(pos):], " ")), false
	case !withCmd && len(cmd) > 0:
		return nil, nil, c.usagef("unexpected argument %q", cmd[0]), false
	case withCmd && len(cmd) == 0:
		return nil, nil, c.usagef("missing command: zklock %s [flags] %s -- CMD [ARGS...]",
			c.name, strings.Join(names, " ")), false
	}
	return pos, cmd, 0, true
}

// refuse reports the first of names given on the command line (set), as a
// flag that does not apply because of why.
func (c *cli) refuse(set map[string]bool, why string, names ...string) (int, bool) {
	for _, n := range names {
		if set[n] {
			return c.usagef("--%s does not apply %s", n, why), false
		}
	}
	return 0, true
}

// visited returns the names of the flags given on the command line.
func visited(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
