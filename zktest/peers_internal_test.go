package zktest

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestProxyHoldOneWay pins the one-way hold of the peer network: with the
// up direction held, a request reaches the server only after the release,
// and the reply then comes back on the same connection.
func TestProxyHoldOneWay(t *testing.T) {
	t.Parallel()
	p, err := newProxy([]string{echoServer(t)})
	require.NoError(t, err)
	t.Cleanup(p.close)
	c, err := net.Dial("tcp", p.Addrs()[0])
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func(msg string, wait time.Duration) (string, error) {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			return "", err
		}
		return r.ReadString('\n')
	}
	got, err := roundTrip("a", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "a\n", got)

	for _, held := range [][2]bool{{true, false}, {false, true}, {true, true}} {
		p.hold(held[0], held[1])
		_, err = roundTrip("b", 300*time.Millisecond)
		require.Error(t, err, "held %v: no round trip", held)
		p.hold(false, false)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err = r.ReadString('\n')
		require.NoError(t, err, "held %v: the held bytes arrive after the release", held)
		require.Equal(t, "b\n", got)
	}
}
