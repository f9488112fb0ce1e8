package queue

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckPath reports why ZooKeeper would refuse p as a node path, or why a
// lock must not live there. The character rules are ZooKeeper's
// PathUtils.validatePath.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case p[0] != '/':
		return fmt.Errorf("%q is not absolute", p)
	case p == "/":
		return errors.New(`"/" cannot hold lock nodes`)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("%q ends with a slash", p)
	case p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/"):
		return fmt.Errorf("%q is under /zookeeper, which the server reserves", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("%q is not valid UTF-8", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Errorf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("%q has a relative segment %q", p, seg)
		}
	}
	for _, r := range p {
		if badRune(r) {
			return fmt.Errorf("%q has invalid character %U", p, r)
		}
	}
	return nil
}

func badRune(r rune) bool {
	return r == 0 || (r > 0 && r < 0x20) || (r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff)
}

// Parents returns the ancestors of p, outermost first, excluding "/".
func Parents(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// LongestNode returns the length of the longest node path a contender of
// kind creates under dir: a protected name (40 characters), the kind, and
// a 10-digit sequence suffix (in the request path of a downgrade's
// non-sequential node), under dir itself or, for a semaphore lease, under
// dir/leases or dir/locks.
func LongestNode(dir, kind string) int {
	n := len(dir) + 1 + len(ProtectedPrefix) + 37 + max(len(kind), len(KindWrite)) + SeqLen
	if kind == KindLease {
		n += len("/leases")
	}
	return n
}
