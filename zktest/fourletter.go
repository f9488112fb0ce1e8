package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	// fourLetterTimeout bounds one command when ctx has no earlier deadline;
	// a paused server accepts the connection (the kernel does) but never answers.
	fourLetterTimeout = 10 * time.Second
	// pollTimeout bounds one command inside a polling loop.
	pollTimeout = 3 * time.Second
	// maxFourLetterReply guards against an endless reply.
	maxFourLetterReply = 32 << 20
)

// FourLetter sends a four-letter-word command ("ruok", "srvr", "mntr",
// "dump", "cons"...) to server i and returns its reply. It needs the command
// whitelisted (managed servers whitelist all of them). Without a deadline in
// ctx it gives up after 10s.
func (c *Cluster) FourLetter(ctx context.Context, i int, cmd string) (string, error) {
	if i < 0 || i >= len(c.servers) {
		return "", fmt.Errorf("zktest: no server %d in a cluster of %d", i, len(c.servers))
	}
	return fourLetter(ctx, c.servers[i].addr, cmd)
}

func fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: %q is not a four-letter word", cmd)
	}
	ctx, cancel := boundedCtx(ctx, fourLetterTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	// Closing the connection is what unblocks a read when ctx ends early.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, ctxError(ctx, err))
	}
	out, err := io.ReadAll(io.LimitReader(conn, maxFourLetterReply))
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, ctxError(ctx, err))
	}
	return string(out), nil
}

// ctxError makes an I/O error caused by ctx's end (the connection's deadline
// is ctx's, and may pass a moment before ctx reports it) wrap ctx's error.
func ctxError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	default:
		return err
	}
}

// Mntr returns server i's 'mntr' output as a map from key (zk_version,
// zk_server_state, zk_znode_count...) to value.
func (c *Cluster) Mntr(ctx context.Context, i int) (map[string]string, error) {
	out, err := c.FourLetter(ctx, i, "mntr")
	if err != nil {
		return nil, err
	}
	m := parseMntr(out)
	if len(m) == 0 {
		return nil, fmt.Errorf("zktest: mntr on server %d: unexpected reply %q", i, firstLine(out))
	}
	return m, nil
}

// MntrSum adds up the integer 'mntr' value key (a counter such as
// zk_packets_received) over every running, unpaused server.
func (c *Cluster) MntrSum(ctx context.Context, key string) (int64, error) {
	var sum int64
	for i, s := range c.servers {
		if !s.answering() {
			continue
		}
		m, err := c.Mntr(ctx, i)
		if err != nil {
			return 0, err
		}
		v, ok := m[key]
		if !ok {
			return 0, fmt.Errorf("zktest: mntr on server %d has no %s", i, key)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("zktest: mntr %s on server %d is %q, not an integer", key, i, v)
		}
		sum += n
	}
	return sum, nil
}

func parseMntr(out string) map[string]string {
	m := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if ok && strings.HasPrefix(k, "zk_") {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// srvrMode returns the "Mode:" of an 'srvr' reply (leader, follower,
// standalone, observer) and the zxid, or "" when the server is not serving.
func srvrMode(out string) (mode string, zxid int64) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Mode":
			mode = v
		case "Zxid":
			zxid, _ = strconv.ParseInt(strings.TrimPrefix(v, "0x"), 16, 64)
		}
	}
	return mode, zxid
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
