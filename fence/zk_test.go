package fence_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/zktest"
)

// A holder whose node was deleted under it (Break with force: it is not
// told, its session is fine) still has its token; once the next holder
// has written through the fence, the database and the HTTP service both
// refuse the old holder's writes.
func TestZooKeeperBrokenHolderRefused(t *testing.T) {
	c := zktest.Start(t)
	ctx := testCtx(t)
	session := func() *zklock.Session {
		s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1, s2 := session(), session()
	old, err := zklock.NewMutex(s1, "/fence-test/report")
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := zklock.Break(ctx, s2, "/fence-test/report", true); err != nil {
		t.Fatal(err)
	}
	next, err := zklock.NewMutex(s2, "/fence-test/report")
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer next.Unlock(ctx)
	if old.Token() <= 0 || next.Token() <= old.Token() {
		t.Fatalf("tokens: old %d, next %d", old.Token(), next.Token())
	}

	f, db := newFence(t, engines[0])
	write := func(h fence.Holder) error {
		return f.Do(ctx, db, "report", h.Token(), func(context.Context, *sql.Tx) error { return nil })
	}
	if err := write(next); err != nil {
		t.Fatal(err)
	}
	var stale *fence.StaleTokenError
	if err := write(old); !errors.As(err, &stale) || stale.Stored != next.Token() {
		t.Fatalf("the broken holder's write: %v, want refused by %d", err, next.Token())
	}

	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer srv.Close()
	for _, c := range []struct {
		h    fence.Holder
		want int
	}{{next, http.StatusOK}, {old, http.StatusConflict}} {
		client := &http.Client{Transport: fence.Transport(c.h, srv.Client().Transport)}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/report", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("PUT with token %d: %d, want %d", c.h.Token(), resp.StatusCode, c.want)
		}
	}
	_ = old.Unlock(ctx) // its node is gone: ErrLockLost or ErrNotLocked, either is fine here
}

// The shell job of docs/fencing.md, read from the page, runs under a real
// zklock run twice and publishes with each run's token; run again with the
// first run's token, as a holder that slept through the second would, psql
// fails with the stale token's message and writes nothing.
func TestZklockRunFencesPsql(t *testing.T) {
	script := docScript(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "zklock")
	build := exec.CommandContext(testCtx(t), "go", "build", "-o", bin, "github.com/zklock/zklock/cmd/zklock")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build zklock: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "publish-report.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	db := openPostgres(t)
	ctx := testCtx(t)
	f, _ := fence.New(fence.Postgres)
	if err := f.CreateTable(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE reports (name text PRIMARY KEY, state text, token bigint); INSERT INTO reports VALUES ('nightly', 'new', 0)"); err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	c := zktest.Start(t)
	env := append(os.Environ(),
		"PATH="+postgres(t).BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DATABASE_URL="+postgres(t).DSN()+" options=-csearch_path="+schema)
	published := func() int64 {
		var tok int64
		if err := db.QueryRowContext(ctx, "SELECT token FROM reports WHERE name = 'nightly'").Scan(&tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	var tokens []int64
	for range 2 {
		cmd := exec.CommandContext(ctx, bin, "run", "--servers", c.ConnectString(), "/fence-test/nightly-report", "--", filepath.Join(dir, "publish-report.sh"))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zklock run: %v\n%s", err, out)
		}
		tokens = append(tokens, published())
	}
	if tokens[0] <= 0 || tokens[1] <= tokens[0] || stored(t, db, f, "nightly-report") != tokens[1] {
		t.Fatalf("published tokens %v, fence %d", tokens, stored(t, db, f, "nightly-report"))
	}
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "publish-report.sh"))
	cmd.Env = append(env, "ZKLOCK_TOKEN="+strconv.FormatInt(tokens[0], 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	want := "zklock: stale token " + strconv.FormatInt(tokens[0], 10) + ", " + strconv.FormatInt(tokens[1], 10) + " was admitted"
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("the stale run: %v, stderr %q; want exit 3 and %q", err, stderr.String(), want)
	}
	if published() != tokens[1] {
		t.Fatalf("the stale run published: token %d", published())
	}
	t.Logf("published with %v; the stale replay: %s", tokens, strings.TrimSpace(stderr.String()))
}

// docScript returns the shell script of docs/fencing.md: the ```sh block
// that starts with "#!/bin/sh".
func docScript(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile("../docs/fencing.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(page), "```sh\n")[1:] {
		body, _, ok := strings.Cut(block, "```")
		if ok && strings.HasPrefix(body, "#!/bin/sh\n") {
			return body
		}
	}
	t.Fatal("docs/fencing.md has no ```sh block starting with #!/bin/sh")
	return ""
}
