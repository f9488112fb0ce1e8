// Package roundtrip counts the round trips a database client makes: every
// time the client reads after it wrote, it waited for the server once, so
// writes pipelined before one read count once. It backs the fence's
// "one round trip" with a count rather than a reading of a driver's code.
package roundtrip

import (
	"context"
	"database/sql"
	"net"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Counter counts round trips over every connection it dialed.
type Counter struct{ n atomic.Int64 }

// Load returns the round trips so far.
func (c *Counter) Load() int64 { return c.n.Load() }

// OpenPostgres opens a pgx database/sql pool on dsn whose connections are
// counted by c.
func OpenPostgres(dsn string, c *Counter) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: conn, c: c}, nil
	}
	return stdlib.OpenDB(*cfg), nil
}

// countedConn counts a round trip at the first read after a write.
type countedConn struct {
	net.Conn
	c     *Counter
	mu    sync.Mutex
	wrote bool
}

func (k *countedConn) Write(p []byte) (int, error) {
	k.mu.Lock()
	k.wrote = true
	k.mu.Unlock()
	return k.Conn.Write(p)
}

func (k *countedConn) Read(p []byte) (int, error) {
	k.mu.Lock()
	if k.wrote {
		k.wrote = false
		k.c.n.Add(1)
	}
	k.mu.Unlock()
	return k.Conn.Read(p)
}
