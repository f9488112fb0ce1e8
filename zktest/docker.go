package zktest

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// The Docker fallback runs the official image as a standalone server whose
// client port is published on 127.0.0.1 only. It is used when there is no
// local installation and a Docker engine answers.
const (
	dockerImage     = "zookeeper:3.8"
	dockerPingLimit = 10 * time.Second
	dockerStopGrace = 10 * time.Second
)

// dockerAvailable reports whether a Docker engine answers, wherever
// testcontainers finds it (DOCKER_HOST, ~/.testcontainers.properties, the
// usual sockets).
func dockerAvailable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), dockerPingLimit)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err == nil
}

// startDocker runs one server in a container.
func startDocker(t testing.TB, o options) *Cluster {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, opts: o, source: "docker " + dockerImage}
	d := &dockerServer{opts: o, hostPort: ports[0]}
	c.servers = []*Server{{c: c, index: 0, addr: "127.0.0.1:" + strconv.Itoa(ports[0]), ctl: d}}
	t.Cleanup(c.cleanup)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), o.startTimeout)
	defer cancel()
	if err := d.create(ctx); err != nil {
		t.Fatalf("zktest: start %s: %v", dockerImage, err)
	}
	if err := c.waitServerUp(ctx, 0, true); err != nil {
		t.Fatalf("zktest: %s did not serve: %v", dockerImage, err)
	}
	c.setStartupTime(time.Since(began))
	return c
}

// dockerServer controls a server in a container. The host port is chosen
// by zktest, not Docker, so that it stays the same across Stop and Start.
type dockerServer struct {
	opts     options
	hostPort int
	ctr      *testcontainers.DockerContainer
}

var _ control = (*dockerServer)(nil)

func (d *dockerServer) create(ctx context.Context) error {
	ms := func(v time.Duration) string { return strconv.FormatInt(v.Milliseconds(), 10) }
	port := network.MustParsePort("2181/tcp")
	ctr, err := testcontainers.Run(ctx, dockerImage,
		testcontainers.WithExposedPorts("2181/tcp"),
		testcontainers.WithEnv(map[string]string{
			"ZOO_TICK_TIME":              ms(d.opts.tickTime),
			"ZOO_4LW_COMMANDS_WHITELIST": "*",
			"ZOO_ADMINSERVER_ENABLED":    "false",
			"ZOO_CFG_EXTRA": "minSessionTimeout=" + ms(d.opts.minSession) +
				" maxSessionTimeout=" + ms(d.opts.maxSession),
			"JVMFLAGS": "-Dznode.container.checkIntervalMs=" + ms(d.opts.containerInterval) +
				" -Dzookeeper.forceSync=no",
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{port: {{
				HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(d.hostPort),
			}}}
		}),
	)
	d.ctr = ctr
	return err
}

func (d *dockerServer) launch() error {
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.startTimeout)
	defer cancel()
	return d.ctr.Start(ctx)
}

func (d *dockerServer) stop() error { return d.stopWithin(dockerStopGrace) }
func (d *dockerServer) kill() error { return d.stopWithin(0) }

func (d *dockerServer) stopWithin(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace+time.Minute)
	defer cancel()
	return d.ctr.Stop(ctx, &grace)
}

func (d *dockerServer) teardown() error {
	if d.ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return d.ctr.Terminate(ctx)
}

func (d *dockerServer) pause() error  { return fmt.Errorf("%w: Pause in Docker", ErrNotSupported) }
func (d *dockerServer) resume() error { return fmt.Errorf("%w: Resume in Docker", ErrNotSupported) }
func (d *dockerServer) running() bool { return d.ctr != nil && d.ctr.IsRunning() }

func (d *dockerServer) exited() (bool, string) {
	if d.ctr == nil || d.ctr.IsRunning() {
		return false, ""
	}
	return true, "container stopped"
}

func (d *dockerServer) logTail(lines int) string {
	if d.ctr == nil {
		return "(no container)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := d.ctr.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer r.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, io.LimitReader(r, 32<<20))
	return lastLines(b.String(), lines)
}
