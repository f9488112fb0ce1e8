package doccheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// runHead is the file around a README fragment that TestReadmeFragmentsRun
// runs: main calls it with a ctx bounded in time and no session, since the
// fragment opens its own from ZK_SERVERS, as a reader's program would.
const runHead = `package main

import (
	doccheckContext "context"
	doccheckFmt "fmt"
	doccheckOs "os"
	doccheckTime "time"

	doccheckZklock "github.com/zklock/zklock"
)

%s

func main() {
	ctx, cancel := doccheckContext.WithTimeout(doccheckContext.Background(), doccheckTime.Minute)
	defer cancel()
	if err := fragment(ctx, nil); err != nil {
		doccheckFmt.Println("fragment:", err)
		doccheckOs.Exit(1)
	}
}

func fragment(ctx doccheckContext.Context, s *doccheckZklock.Session) error {
`

// Every fragment of the README that opens its own session works as pasted,
// against a fresh ZooKeeper and again against what its first run left:
// compiling is not enough (a guarded write to a node nothing created
// compiled, and failed every time it ran).
func TestReadmeFragmentsRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sns, err := extract(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var run []snippet
	for _, sn := range sns {
		if !strings.HasPrefix(strings.TrimSpace(sn.code), "package main") && strings.Contains(sn.code, "NewSession(") {
			run = append(run, sn)
		}
	}
	if len(run) == 0 {
		t.Fatal("no README fragment opens a session: the selection is broken")
	}
	c := zktest.Start(t)
	dir := snippetModule(t, repo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i, sn := range run {
		name := fmt.Sprintf("r%03d", i)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(sn.programWith(runHead)), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, name, "fragment")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./"+name)
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("README.md:%d: go build: %v\n%s", sn.line, err, out)
		}
		for k := 1; k <= 2; k++ {
			cmd := exec.CommandContext(ctx, bin)
			cmd.Env = append(os.Environ(), "ZK_SERVERS="+strings.Join(c.Servers(), ","))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("README.md:%d, run %d of 2: %v\n%s", sn.line, k, err, out)
			}
		}
	}
}
