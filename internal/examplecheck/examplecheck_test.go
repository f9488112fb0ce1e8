package examplecheck

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The check finds a type without an example, a wanted function without
// one, and an example that is never run; and nothing in a package where
// everything has one.
func TestMissing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p.go", `package p

type Shown struct{}
type Hidden struct{}
func New() *Shown { return nil }
func Helper() {}
func (Shown) Do() {}
`)
	write("p_test.go", `package p_test

import "fmt"

func ExampleNew() {
	fmt.Println("x")
	// Output: x
}

func ExampleShown_Do() {
	fmt.Println("never run")
}
`)
	got, err := Missing(dir, "Helper", "Shown.Do", "New")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ExampleShown_Do (for Shown.Do) has no Output comment: it is never run", "Helper", "type Hidden"}
	if !slices.Equal(got, want) {
		t.Fatalf("Missing = %q\nwant %q", got, want)
	}
}
