package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
)

// debianRoot holds one directory per installed major version of Debian's
// postgresql-NN packages, each with its server binaries in bin/: Debian puts
// only the client wrappers on PATH.
const debianRoot = "/usr/lib/postgresql"

// installHelp ends every "no PostgreSQL" failure.
const installHelp = `pgtest needs PostgreSQL's server binaries (initdb, postgres). Either:
  - install them: sudo scripts/install-deps.sh   (or: sudo apt-get install postgresql)
  - or set PGTEST_BINDIR to the directory that holds initdb and postgres`

// findBinDir returns the directory of initdb and postgres: PGTEST_BINDIR,
// else initdb's directory on PATH (after symbolic links, so that psql and
// the rest of the version's tools are found beside it), else the newest
// major version under /usr/lib/postgresql.
func findBinDir() (string, error) {
	if dir := os.Getenv("PGTEST_BINDIR"); dir != "" {
		if !hasServer(dir) {
			return "", fmt.Errorf("pgtest: PGTEST_BINDIR=%s holds no initdb and postgres", dir)
		}
		return dir, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasServer(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(debianRoot, "*", "bin"))
	// The newest major version first: "16" after "9" needs a numeric sort.
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("pgtest: no PostgreSQL server found on PATH or under %s\n%s", debianRoot, installHelp)
}

func majorOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// account is a user and group to run the server as.
type account struct{ uid, gid uint32 }

// serverUser is who the server runs as. PostgreSQL refuses to run as root,
// so a root test process runs it as the postgres account that Debian's
// package creates (or nobody, failing that); anyone else runs it as
// themselves (nil).
func serverUser() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and no postgres or nobody account to run the server as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: account %s has uid %q gid %q", u.Username, u.Uid, u.Gid)
	}
	return &account{uid: uint32(uid), gid: uint32(gid)}, nil
}
