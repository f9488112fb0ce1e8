package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

const usageText = `zklock runs a command under a distributed lock held in ZooKeeper.

Usage:
  zklock run [flags] PATH -- CMD [ARGS...]     run CMD while holding the lock PATH
  zklock status [flags] PATH                   show the holders and the waiters of PATH
  zklock status --watch [flags] PATH           show them again on every change
  zklock ls [flags] PREFIX                     list the locks, semaphores and elections under PREFIX
  zklock revoke [flags] PATH                   ask the holders of PATH to release (Curator's revocation)
  zklock break [--force] [flags] PATH          delete the holders' nodes of a stuck lock
  zklock elect [flags] PATH VALUE -- CMD...    run CMD while leading the election PATH
  zklock elect --observe [flags] PATH          print the leader of PATH and each change
  zklock dev-server [--size N]                 run a throwaway local ZooKeeper
  zklock help [COMMAND]                        show this help, or a command's flags
  zklock --version                             print the version

Servers come from --servers host:port,... or $ZK_SERVERS (default 127.0.0.1:2181).
A secured ensemble (docs/security.md): --tls-ca FILE, --tls-cert FILE and
--tls-key FILE (or $ZK_TLS_CA, $ZK_TLS_CERT, $ZK_TLS_KEY) connect over TLS;
--auth-file FILE or $ZK_AUTH (USER:PASSWORD; --auth too, but ps shows it)
authenticate with ZooKeeper's digest scheme, and the nodes zklock creates
are then that user's alone. While connecting takes more than a second,
zklock says why each attempt fails (connection refused, no such host, TLS
handshake failed) and keeps trying until --connect-timeout.
Flags may come before or after PATH (and VALUE); "--" ends them. A flag
that does not apply to what was asked is refused.

The command gets ZKLOCK_PATH, ZKLOCK_TOKEN (the fencing token: it increases
with every acquisition of PATH), ZKLOCK_NODE and ZKLOCK_HELD=1 in its
environment. It runs in a process group of its own (in the terminal's
foreground when zklock is); every signal sent to zklock is passed on to that
group and to any process of the command's that left it. The lock is held
until no process of the command's is left: on Linux zklock adopts the
command's orphans (and a daemon it starts with setsid) and waits for them.
If zklock dies, even by SIGKILL, so do the command's processes (elsewhere
than on Linux: its process group).
If the lock is lost while any runs (the session may have expired), they get
SIGTERM, and SIGKILL after --grace: the loss is signalled a safety margin (a
fifth of the session timeout) before ZooKeeper can grant the lock to anyone
else, and --grace must be shorter than that margin (default: half of it).

A waiter reports on stderr, one line each, who it waits behind (and each
change), a lost connection, an expired session, and when it acquires;
--quiet silences that. --exit-code-file FILE receives the command's exit
code when it ends, to tell it from zklock's own codes below.

Exit codes:
  N        the command's own exit code, passed on as it is, a failure too (run,
           elect); --exit-code-file tells a command's 2 from zklock's
  2        usage error: bad flags or arguments; nothing was done
  122      --try: another owner holds the lock or waits for it
  123      the lock or leadership was lost (or, run --revocable, revoked) while
           the command ran
  124      --timeout passed before the lock was acquired (elect: before it was
           elected)
  125      zklock failed: ZooKeeper unreachable, path used by another kind of lock,
           ls cut short (--max-nodes, --timeout, an unreadable node), ...
  126      the command could not be started
  127      the command was not found
  128+N    the command was killed by signal N, or zklock got signal N while waiting
`

var commandHelp = map[string]struct {
	usage string
	flags interface{ register(*flag.FlagSet) }
}{
	"run": {`zklock run [flags] PATH -- CMD [ARGS...]

Acquire PATH (a lock; with -n a semaphore slot, in zklock's one-queue layout
with --queue; with --shared or --write a reader/writer lock), run CMD,
release when no process of CMD's is left, and exit with CMD's code.
Holders of one PATH must agree on its kind: a plain lock does not exclude
--shared readers, so zklock refuses a PATH in use by another kind.
With --revocable, 'zklock revoke PATH' ends the command as a loss of the
lock does (SIGTERM, SIGKILL after --grace, exit 123), and the lock is
released once no process of the command's is left.
`, &runFlags{}},
	"status": {`zklock status [flags] PATH

Print the holders of PATH, then the waiters in the order they will be
served, with each node's data, session, age and token. The kind of lock is
detected from the nodes (--kind other than auto fails on a PATH in use by
another kind, as acquiring does), and named as 'zklock ls' names it (mutex, mutex/election, rwmutex, semaphore, semaphore-queue).
With --json, print one object: path, kind (omitted when nobody is there),
limit (a semaphore's), holders and waiting (lists of nodes: role, mode,
node, session, token, created, age_ms, data, revocation_requested) and
waiting_count (a number, as in 'zklock ls --json').

With --watch, print the state again each time it changes (a holder or
waiter comes or goes, a holder's data changes), from ZooKeeper watches on
PATH, its children and the holders' nodes, until interrupted; then exit 0.
On a terminal each state replaces the last; otherwise each is printed
after a line with the time, states separated by a blank line (with --json,
one object per line, with a "time" field).
`, &statusFlags{}},
	"ls": {`zklock ls [flags] PREFIX

List every lock, reader/writer lock, semaphore and election at or under
PREFIX ("/" for the whole tree): one row per holder, with the holder's
session, age, token (as Mutex.Token makes it: the node's creation zxid
shifted left by 12) and data, and the number of waiters. A primitive
nobody holds has one row of dashes. With --json, print one array of
objects: path, kind, limit (a semaphore's, when its path stores it),
holders (each with node, mode, session, token, created, age_ms and data,
as in 'zklock status --json') and waiting_count (a number, as in status).

A path is a primitive when its children are contender nodes, its kind
the library's type name:
  mutex            "lock-" nodes whose holder's data carries zklock's lock tag
  mutex/election   "lock-" or Kazoo "__lock__" nodes without it: a Mutex and
                   an Election (also Curator's InterProcessMutex and
                   LeaderSelector) look alike on the wire
  election         Curator LeaderLatch "latch-" nodes
  rwmutex          "__READ__"/"__WRIT__" (or Kazoo "__rlock__") nodes; the
                   KIND column adds /read or /write to each holder
  semaphore        "locks" and "leases" children holding contenders, or a
                   limit in the path's data; HOLDERS reads held/limit
A path with nodes of two kinds is reported on stderr. Nothing found:
says so, exit 0. The walk reads at most --max-nodes nodes and stops at
--timeout: then what was found is printed, followed on stdout by a line
"listing incomplete (...)" (never "no lock": what was not read may be
locked), and zklock exits 125; --json prints the array of what was found.
`, &lsFlags{}},
	"revoke": {`zklock revoke [flags] PATH

Ask the holders of the lock at PATH to release it: write Curator's
revocation request ("__REVOKE__") into their nodes (the first contender;
of a reader/writer lock held by readers, every reader ahead of the first
writer), or into the one node PATH names (a holder or a waiter, as
'zklock status' lists them). A zklock holder made revocable (WithRevocable;
'zklock run --revocable', which then ends its command as on a loss) and a
Curator holder made revocable (makeRevocable) are told and decide;
'zklock status' shows the request as the holder's data. A zklock holder
that is not revocable is refused (exit 125): its node announces its
release, and a write into it would let the waiter behind it in. An
election's leader and a reader without --revocable are not refused: their
nodes cannot be told from Curator's, so they are written, nobody listens,
the leader keeps leading, and its value (in status, ls, elect --observe)
then reads __REVOKE__ ("revocation requested"). Prints each node written
to: "revocation requested: NODE" for a revocable zklock holder's,
"revocation written: NODE (...)" for one that carries no zklock mark.
`, &connFlags{}},
	"break": {`zklock break [--force] [flags] PATH

Delete the holders' nodes of the lock at PATH so that the next contender
holds. A holder's node exists only while its session lives, so without
--force zklock prints who holds and refuses (exit 125): the holder may be
working. With --force the nodes go; the old holder is not told and may
still act: only fencing protects the resource (its guarded writes fail,
and the next holder's token is larger). Needs delete permission on PATH.
`, &breakFlags{}},
	"elect": {`zklock elect [flags] PATH VALUE -- CMD [ARGS...]
zklock elect --observe [flags] PATH

Campaign on PATH with VALUE, run CMD while leading, resign when no process
of CMD's is left, and exit with CMD's code; CMD runs as under 'zklock run'.
With --observe, print the leader and each change until interrupted (then
exit 0), each leader with its session, token and the time its node was
created (when it became a candidate: ZooKeeper does not record when it
began to lead); --json applies to it alone (the time is "created"),
--timeout, --grace, --quiet and --exit-code-file do not.
`, &electFlags{}},
	"dev-server": {`zklock dev-server [flags]

Start a throwaway ZooKeeper on 127.0.0.1 from the local installation (--size
servers), print ZK_SERVERS=host:port,... on stdout, and run until
interrupted; then stop them and remove their data. $ZKTEST_SERVERS is ignored.
(--size was -n before; -n is now run's alone.)
`, &devFlags{}},
}

// help prints the usage, or a command's usage and flags, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	h, ok := commandHelp[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "zklock help: unknown command %q (see 'zklock help')\n", args[0])
		return exitUsage
	}
	fmt.Fprintf(stdout, "Usage: %s\nFlags:\n", h.usage)
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	h.flags.register(fs)
	printFlags(stdout, fs)
	fmt.Fprint(stdout, "\nExit codes: see 'zklock help'.\n")
	return exitOK
}

// printFlags is flag.PrintDefaults as the docs write flags: "--name" (the
// flag package takes one dash or two alike), "-n" for a one-letter name.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		typ, usage := flag.UnquoteUsage(f)
		line := "  " + dash + f.Name
		if typ != "" {
			line += " " + typ
		}
		switch def := f.DefValue; {
		case def == "" || def == "0" || def == "false" || def == "0s":
		case typ == "string":
			usage += fmt.Sprintf(" (default %q)", def)
		default:
			usage += fmt.Sprintf(" (default %v)", def)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}
