package pgtest_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/zklock/zklock/fence/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A server serves SQL on its TCP address, and Close stops it and removes
// its directory.
func TestStartServesAndCloseRemoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := pgtest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	var loopback bool
	var port int
	if err := db.QueryRowContext(ctx, "SELECT inet_server_addr() = '127.0.0.1', inet_server_port()").Scan(&loopback, &port); err != nil {
		t.Fatal(err)
	}
	if !loopback || port != s.Port() || s.Addr() != "127.0.0.1:"+strconv.Itoa(port) {
		t.Errorf("served on 127.0.0.1: %v, port %d; Addr says %s", loopback, port, s.Addr())
	}
	if _, err := os.Stat(filepath.Join(s.SocketDir(), ".s.PGSQL."+strconv.Itoa(s.Port()))); err != nil {
		t.Errorf("no Unix socket in SocketDir: %v", err)
	}
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.SocketDir()); !os.IsNotExist(err) {
		t.Errorf("directory %s after Close: %v", s.SocketDir(), err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// PGTEST_BINDIR that holds no server is refused with its name.
func TestBinDirWithoutServer(t *testing.T) {
	t.Setenv("PGTEST_BINDIR", t.TempDir())
	_, err := pgtest.Launch(context.Background())
	if err == nil {
		t.Fatal("Launch with an empty PGTEST_BINDIR: no error")
	}
	t.Log(err)
}
