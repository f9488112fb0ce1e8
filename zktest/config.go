package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	standaloneMain = "org.apache.zookeeper.server.ZooKeeperServerMain"
	quorumMain     = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// baseJVMFlags make a small JVM start fast: no JIT tiers beyond C1, a serial
// collector, class data sharing when available, no perf data in /tmp.
var baseJVMFlags = []string{
	"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
	"-Xshare:auto", "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
	"-Djava.awt.headless=true", "-Djava.net.preferIPv4Stack=true",
}

// node is the fixed identity of one managed server: its directory and ports
// stay the same across restarts so that it rejoins with its own data.
type node struct {
	id           int // ZooKeeper's myid, 1-based
	dir          string
	clientPort   int
	quorumPort   int
	electionPort int
	securePort   int // TLS client port, used with WithSelfSignedTLS
}

func (n *node) addr() string       { return "127.0.0.1:" + strconv.Itoa(n.clientPort) }
func (n *node) secureAddr() string { return "127.0.0.1:" + strconv.Itoa(n.securePort) }
func (n *node) cfgPath() string    { return filepath.Join(n.dir, "zoo.cfg") }
func (n *node) logPath() string    { return filepath.Join(n.dir, "server.log") }
func (n *node) dataDir() string    { return filepath.Join(n.dir, "data") }
func (n *node) serverLine() string {
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d", n.id, n.quorumPort, n.electionPort)
}

// assignPorts gives every node fresh client, quorum, election and TLS
// client ports, reserved until the returned set is released.
func assignPorts(nodes []*node) (*portSet, error) {
	set, err := reservePorts(4 * len(nodes))
	if err != nil {
		return nil, err
	}
	for i, n := range nodes {
		n.clientPort, n.quorumPort, n.electionPort, n.securePort = set.ports[4*i], set.ports[4*i+1], set.ports[4*i+2], set.ports[4*i+3]
	}
	return set, nil
}

// writeConfig writes zoo.cfg (and myid for an ensemble) for nodes[i]; tf,
// when not nil, gives it a TLS client port; pn, when not nil, routes its
// connections to the other servers through their proxies.
func writeConfig(o options, tf *tlsFiles, pn *peerNet, nodes []*node, i int) error {
	n := nodes[i]
	if err := os.MkdirAll(n.dataDir(), 0o755); err != nil {
		return err
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	lines := []string{
		"tickTime=" + ms(o.tickTime),
		"dataDir=" + n.dataDir(),
		"clientPort=" + strconv.Itoa(n.clientPort),
		"clientPortAddress=127.0.0.1",
		"minSessionTimeout=" + ms(o.minSession),
		"maxSessionTimeout=" + ms(o.maxSession),
		"maxClientCnxns=0",
		"4lw.commands.whitelist=" + o.fourLetterWords,
		"admin.enableServer=false",
		"forceSync=" + forceSync(o),
	}
	if tf != nil {
		lines = append(lines, tlsConfigLines(tf, n.securePort)...)
	}
	if len(nodes) > 1 {
		lines = append(lines,
			"initLimit="+strconv.Itoa(initLimitTicks),
			"syncLimit="+strconv.Itoa(o.syncLimit),
			"reconfigEnabled=false",
		)
		for _, peer := range nodes {
			if pn == nil || peer == n {
				lines = append(lines, peer.serverLine())
			} else {
				lines = append(lines, pn.serverLine(i, peer))
			}
		}
		myid := []byte(strconv.Itoa(n.id) + "\n")
		if err := os.WriteFile(filepath.Join(n.dataDir(), "myid"), myid, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(n.cfgPath(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// forceSync is zookeeper.forceSync's value: see WithFsync.
func forceSync(o options) string {
	if o.fsync {
		return "yes"
	}
	return "no"
}

// javaArgs is the command line after the java binary for one server.
func javaArgs(in *install, o options, n *node, ensemble bool) []string {
	args := append([]string(nil), baseJVMFlags...)
	args = append(args,
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.4lw.commands.whitelist="+o.fourLetterWords,
		"-Dzookeeper.forceSync="+forceSync(o),
		"-Dzookeeper.jmx.log4j.disable=true",
		// Election connections to a peer that is paused would otherwise wait 5s.
		"-Dzookeeper.cnxTimeout=1000",
		// An election re-sends its votes after a wait that doubles up to this
		// (60s by default): peers whose JVMs start late are heard sooner.
		"-Dzookeeper.fastleader.maxNotificationInterval=1000",
		"-Dznode.container.checkIntervalMs="+strconv.FormatInt(o.containerInterval.Milliseconds(), 10),
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-Dzktest.server="+strconv.Itoa(n.id),
	)
	if o.cdsDump != "" {
		args = append(args, "-XX:ArchiveClassesAtExit="+o.cdsDump)
	}
	args = append(args, o.cds...)
	args = append(args, o.jvmFlags...)
	main := standaloneMain
	if ensemble {
		main = quorumMain
	}
	return append(args, "-cp", strings.Join(in.classpath, string(os.PathListSeparator)), main, n.cfgPath())
}
