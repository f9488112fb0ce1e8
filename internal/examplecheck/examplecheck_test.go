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

// WithoutOwnExample finds a type whose only example is its constructor's,
// and passes one with an example of its own or of a method.
func TestWithoutOwnExample(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p.go", `package p

type ByCtor struct{}
type ByType struct{}
type ByMethod struct{}
func NewByCtor() *ByCtor { return nil }
func (ByMethod) Do() {}
`)
	write("p_test.go", `package p_test

import "fmt"

func ExampleNewByCtor() {
	fmt.Println("x")
	// Output: x
}

func ExampleByType() {
	fmt.Println("x")
	// Output: x
}

func ExampleByMethod_Do() {
	fmt.Println("x")
	// Output: x
}
`)
	got, err := WithoutOwnExample(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"type ByCtor"}; !slices.Equal(got, want) {
		t.Fatalf("WithoutOwnExample = %q\nwant %q", got, want)
	}
}

// The check finds an example that uses a helper of the test files (a type
// or function of another file or of its own file, a name of export_test.go
// reached through the package), and passes one that declares what it uses,
// shadows a helper's name, or is a whole-file example with its helpers.
func TestNotStandalone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p.go", `package p

type T struct{ N int }
func (T) Do() {}
`)
	write("export_test.go", `package p

var Internal = 1
`)
	write("helpers_test.go", `package p_test

type counter struct{ n int }

func helper() int { return 1 }
`)
	write("a_test.go", `package p_test

import (
	"fmt"

	"example.com/p"
)

type local struct{ n int }

func ExampleT() {
	var c counter // a helper of another file
	fmt.Println(c.n, helper(), p.Internal)
	// Output: 0 1 1
}

func ExampleT_Do() {
	l := local{n: 1} // a helper of its own file, which shows only the body
	fmt.Println(l.n)
	// Output: 1
}

func Example() {
	type counter struct{ n int } // declared inside: shadows the helper
	helper := func() int { return 2 }
	c := counter{n: helper()}
	fmt.Println(c.n, p.T{N: 1}.N)
	// Output: 2 1
}
`)
	write("whole_test.go", `package p_test

import "fmt"

type mine struct{ n int }

func (m mine) twice() int { return 2 * m.n }

func Example_whole() {
	fmt.Println(mine{n: 2}.twice())
	// Output: 4
}
`)
	got, err := NotStandalone(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ExampleT uses counter of helpers_test.go, declared outside it: not standalone",
		"ExampleT uses helper of helpers_test.go, declared outside it: not standalone",
		"ExampleT uses p.Internal of export_test.go, declared outside it: not standalone",
		"ExampleT_Do uses local of a_test.go, declared outside it: not standalone",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("NotStandalone = %q\nwant %q", got, want)
	}
}
