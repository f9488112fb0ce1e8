package zktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDumpSessions(t *testing.T) {
	leader := "SessionTracker dump:\nSession Sets (3)/(1):\n0 expire at Sat Nov 21 20:39:25 UTC 2026:\n" +
		"1 expire at Sat Nov 21 20:39:25 UTC 2026:\n\t0x100000709390000\nephemeral nodes dump:\n" +
		"Sessions with Ephemerals (1):\n0x200000709390001:\n\t/e\nConnections dump:\n" +
		"Connections Sets (1)/(1):\n1 expire at Sat Nov 21 20:39:41 UTC 2026:\n\tip: /127.0.0.1:1 sessionId: 0x300000000000000\n"
	follower := "SessionTracker dump:\nGlobal Sessions(1):\n0x100000709390000\t2000ms\nephemeral nodes dump:\n" +
		"Sessions with Ephemerals (0):\nConnections dump:\n"
	for name, tc := range map[string]struct {
		out  string
		ids  []int64
		list bool
	}{
		"leader":      {leader, []int64{0x100000709390000, 0x200000709390001}, true},
		"follower":    {follower, []int64{0x100000709390000}, true},
		"whitelisted": {"dump is not executed because it is not in the whitelist.\n", nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			ids, ok := dumpSessions(tc.out)
			require.Equal(t, tc.list, ok)
			assert.Len(t, ids, len(tc.ids), "connections do not count")
			for _, id := range tc.ids {
				assert.True(t, ids[id], "0x%x", id)
			}
		})
	}
}

func TestDumpEphemerals(t *testing.T) {
	out := "SessionTracker dump:\nSession Sets (1)/(1):\n1 expire at x:\n\t0x100000709390000\nephemeral nodes dump:\n" +
		"Sessions with Ephemerals (2):\n0x200000709390001:\n\t/e\n\t/a/b\n0x100000709390000:\nConnections dump:\n" +
		"Connections Sets (1)/(1):\n\tip: /127.0.0.1:1 sessionId: 0x300000000000000\n"
	nodes, ok := dumpEphemerals(out)
	require.True(t, ok)
	assert.Equal(t, map[int64][]string{0x200000709390001: {"/e", "/a/b"}, 0x100000709390000: nil}, nodes)
	_, ok = dumpEphemerals("dump is not executed because it is not in the whitelist.\n")
	assert.False(t, ok)
}

func TestSrvrAndMntrParsing(t *testing.T) {
	mode, zxid := srvrMode("Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nZxid: 0x100000002\nMode: follower\n")
	assert.Equal(t, "follower", mode)
	assert.Equal(t, int64(0x100000002), zxid)
	mode, _ = srvrMode("This ZooKeeper instance is not currently serving requests\n")
	assert.Empty(t, mode)
	m := parseMntr("zk_version\t3.8.0\nzk_server_state\tleader\nnoise\n")
	assert.Equal(t, map[string]string{"zk_version": "3.8.0", "zk_server_state": "leader"}, m)
	assert.Equal(t, "b\nc", lastLines("a\nb\nc\n", 2))
}

func TestBuildOptions(t *testing.T) {
	o, err := buildOptions(nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultTickTime, o.tickTime)
	assert.Equal(t, 200*time.Millisecond, o.minSession)
	assert.Equal(t, 2*time.Second, o.maxSession)

	o, err = buildOptions([]Option{WithTickTime(time.Second)})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, o.maxSession, "defaults follow the tick")

	for name, opt := range map[string]Option{
		"tiny tick":         WithTickTime(time.Millisecond),
		"min below 2 ticks": WithSessionTimeouts(100*time.Millisecond, time.Second),
		"max below min":     WithSessionTimeouts(time.Second, 500*time.Millisecond),
		"container":         WithContainerCheckInterval(0),
		"start timeout":     WithStartTimeout(0),
	} {
		_, err := buildOptions([]Option{opt})
		assert.Error(t, err, name)
	}
}

func TestFindClasspathFromZooKeeperHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ZOOKEEPER_HOME", home)
	_, _, err := findClasspath()
	require.ErrorContains(t, err, "no zookeeper-*.jar")

	for _, p := range []string{"conf/logback.xml", "lib/zookeeper-3.8.4.jar", "lib/zookeeper-jute-3.8.4.jar", "lib/netty.jar"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, p), nil, 0o644))
	}
	cp, where, err := findClasspath()
	require.NoError(t, err)
	assert.Contains(t, where, home)
	assert.Equal(t, filepath.Join(home, "conf"), cp[0], "conf first, for logback.xml")
	assert.Len(t, cp, 4)
}

func TestJavaArgs(t *testing.T) {
	o, err := buildOptions([]Option{WithContainerCheckInterval(250 * time.Millisecond), WithJVMFlags("-Xmx64m")})
	require.NoError(t, err)
	n := &node{id: 2, dir: "/x"}
	args := strings.Join(javaArgs(&install{classpath: []string{"a.jar", "b.jar"}}, o, n, true), " ")
	assert.Contains(t, args, "-Dznode.container.checkIntervalMs=250")
	assert.Contains(t, args, "-Xmx64m")
	assert.True(t, strings.HasSuffix(args, "-cp a.jar:b.jar "+quorumMain+" /x/zoo.cfg"), args)
}

// Servers do not fsync unless WithFsync says so; the setting is in zoo.cfg
// and on the JVM's command line alike (zoo.cfg's would override the flag).
func TestForceSync(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{{nil, "no"}, {[]Option{WithFsync()}, "yes"}} {
		o, err := buildOptions(tc.opts)
		require.NoError(t, err)
		n := &node{id: 1, dir: t.TempDir()}
		require.NoError(t, writeConfig(o, nil, nil, []*node{n}, 0))
		cfg, err := os.ReadFile(n.cfgPath())
		require.NoError(t, err)
		assert.Contains(t, strings.Split(string(cfg), "\n"), "forceSync="+tc.want)
		assert.Contains(t, javaArgs(&install{}, o, n, false), "-Dzookeeper.forceSync="+tc.want)
	}
}
