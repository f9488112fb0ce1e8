package zktest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// EnvCDS turns the servers' class data sharing archive off when set to 0.
const EnvCDS = "ZKTEST_CDS"

// Most of the CPU a test server costs is its JVM's start: 0.7 CPU-seconds
// for a standalone ZooKeeper 3.8 on JDK 17 with baseJVMFlags, to its
// first answer, much of it spent loading and verifying the classes of
// ZooKeeper, Netty and the JDK that the JDK's own archive lacks. A dynamic
// class data sharing archive of the classes a server loads
// (-XX:ArchiveClassesAtExit, JDK 13 and later) lets later JVMs map them
// instead: 0.5 CPU-seconds. zktest makes one the first time it starts a
// server and finds none, by starting a throwaway standalone server with
// -XX:ArchiveClassesAtExit and stopping it with SIGTERM (the JVM writes
// the archive as it exits), and keeps it in the user's cache directory,
// one per java binary, classpath and flags, where later test binaries
// find it. A JVM that cannot use an archive (another JDK build, a changed
// jar) ignores it and starts as it would without (-Xshare:auto); a
// failure to make one leaves the servers without it. ZKTEST_CDS=0 turns
// it off.
var cds struct {
	mu    sync.Mutex
	tried map[string]bool // archives this process tried to make
}

// cdsTimeout bounds the making of an archive.
const cdsTimeout = time.Minute

// cdsFlags returns the JVM flag that maps the archive for in and o's JVM
// flags, making the archive first if this process has not tried yet; nil
// without an archive.
func cdsFlags(in *install, o options) []string {
	if os.Getenv(EnvCDS) == "0" || o.cdsDump != "" {
		return nil
	}
	for _, f := range o.jvmFlags {
		if strings.HasPrefix(f, "-Xshare") || strings.Contains(f, "SharedArchiveFile") || strings.Contains(f, "ArchiveClassesAtExit") {
			return nil // the caller's own choice
		}
	}
	path, err := cdsPath(in)
	if err != nil {
		return nil
	}
	flag := []string{"-XX:SharedArchiveFile=" + path}
	// Servers that start while another goroutine makes the archive wait
	// for it.
	cds.mu.Lock()
	defer cds.mu.Unlock()
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return flag
	}
	if cds.tried[path] {
		return nil
	}
	if cds.tried == nil {
		cds.tried = map[string]bool{}
	}
	cds.tried[path] = true
	if err := makeCDS(path); err != nil {
		return nil
	}
	return flag
}

// cdsPath is where the archive for in lives: its name hashes the java
// binary, the classpath (each file's size and time) and baseJVMFlags.
func cdsPath(in *install) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	java, err := filepath.EvalSymlinks(in.java)
	if err != nil {
		return "", err
	}
	for _, f := range append([]string{java}, in.classpath...) {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", f, st.Size(), st.ModTime().UnixNano())
	}
	fmt.Fprintln(h, strings.Join(baseJVMFlags, " "))
	return filepath.Join(dir, "zktest", "zookeeper-"+hex.EncodeToString(h.Sum(nil))[:16]+".jsa"), nil
}

// makeCDS starts a standalone server that writes the archive as it exits,
// stops it, and moves the archive to path.
func makeCDS(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".making-*.jsa")
	if err != nil {
		return err
	}
	tmp.Close()
	os.Remove(tmp.Name()) // the JVM writes it anew
	defer os.Remove(tmp.Name())
	ctx, cancel := context.WithTimeout(context.Background(), cdsTimeout)
	defer cancel()
	c, err := Launch(ctx, 1, func(o *options) { o.cdsDump = tmp.Name() })
	if err != nil {
		return err
	}
	stopErr := c.Server(0).Stop() // SIGTERM: the archive is written on the way out
	if err := c.Close(); err != nil {
		return err
	}
	if stopErr != nil {
		return stopErr
	}
	if st, err := os.Stat(tmp.Name()); err != nil || st.Size() == 0 {
		return fmt.Errorf("zktest: no class data archive written to %s", tmp.Name())
	}
	// Another process may have made one at the same time: either will do.
	return os.Rename(tmp.Name(), path)
}
