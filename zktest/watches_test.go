package zktest

import (
	"slices"
	"testing"
)

func TestParseWchc(t *testing.T) {
	out := map[int64][]string{}
	text := "0x100000a2b3c0000\n\t/a/b\n\t/c\n0x100000a2b3c0001\n\t/d\n"
	if err := parseWchc(text, out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0x100000a2b3c0000], []string{"/a/b", "/c"}) || !slices.Equal(out[0x100000a2b3c0001], []string{"/d"}) {
		t.Fatalf("parsed %v", out)
	}
	if err := parseWchc("0xnothex\n", out); err == nil {
		t.Fatal("a malformed session line parsed")
	}
}
