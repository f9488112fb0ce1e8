package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// debianJars is where Debian's zookeeper package puts its jars; zookeeper.jar
// names its dependencies in its manifest Class-Path.
const debianJars = "/usr/share/java"

// installHelp says how to get a ZooKeeper for the tests; it ends every
// "no ZooKeeper" failure.
const installHelp = `zktest needs a ZooKeeper server. Either:
  - install one: sudo scripts/install-deps.sh   (or: sudo apt-get install zookeeper default-jre-headless)
  - or set ZOOKEEPER_HOME to an Apache ZooKeeper 3.8 binary distribution (with lib/*.jar) and have java on PATH
  - or set ZKTEST_SERVERS=127.0.0.1:2181[,...] to use running servers (fault injection is then unavailable)
  - or run a Docker engine and add zktest's Docker fallback (standalone servers only) to a test file of the package:
      ` + dockerImport

// install is a local ZooKeeper installation that zktest can launch.
type install struct {
	java      string   // path of the java binary
	classpath []string // jars and directories
	where     string   // human description, for logs
}

// findInstall looks for ZOOKEEPER_HOME first, then Debian's jars, and needs a
// java binary ($JAVA_HOME/bin/java or java on PATH) for either.
func findInstall() (*install, error) {
	cp, where, err := findClasspath()
	if err != nil {
		return nil, err
	}
	java, err := findJava()
	if err != nil {
		return nil, fmt.Errorf("found ZooKeeper in %s but %w", where, err)
	}
	return &install{java: java, classpath: cp, where: where}, nil
}

func findClasspath() ([]string, string, error) {
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		var cp []string
		// The tarball's conf/ holds logback.xml; zkServer.sh puts it on the
		// classpath too, which keeps the server's log at INFO.
		if st, err := os.Stat(filepath.Join(home, "conf")); err == nil && st.IsDir() {
			cp = append(cp, filepath.Join(home, "conf"))
		}
		for _, pattern := range []string{"*.jar", "lib/*.jar"} {
			jars, _ := filepath.Glob(filepath.Join(home, pattern))
			cp = append(cp, jars...)
		}
		if !hasZooKeeperJar(cp) {
			return nil, "", fmt.Errorf("ZOOKEEPER_HOME=%s has no zookeeper-*.jar in it or in its lib/", home)
		}
		return cp, "ZOOKEEPER_HOME=" + home, nil
	}
	main := filepath.Join(debianJars, "zookeeper.jar")
	if _, err := os.Stat(main); err != nil {
		return nil, "", errors.New("no ZOOKEEPER_HOME and no " + main)
	}
	cp := []string{main}
	// zookeeper-jute is in the manifest, but naming it costs nothing and
	// guards against a package that drops it; slf4j-simple is the logger.
	// netty-codec is missing from the manifest, yet Netty's TLS handler
	// (a secureClientPort, WithSelfSignedTLS) cannot load without it.
	for _, extra := range []string{"zookeeper-jute.jar", "slf4j-simple.jar", "netty-codec.jar"} {
		if p := filepath.Join(debianJars, extra); fileExists(p) {
			cp = append(cp, p)
		}
	}
	return cp, "Debian's " + debianJars, nil
}

func hasZooKeeperJar(cp []string) bool {
	for _, p := range cp {
		base := filepath.Base(p)
		if strings.HasPrefix(base, "zookeeper-") && !strings.HasPrefix(base, "zookeeper-jute") &&
			strings.HasSuffix(base, ".jar") {
			return true
		}
	}
	return false
}

func findJava() (string, error) {
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		if p := filepath.Join(jh, "bin", "java"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("no java on PATH or in $JAVA_HOME/bin (install default-jre-headless)")
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
