// Package doccheck has no code: its test builds every Go snippet of the
// README and of docs/*.md, so that the documentation never shows code that
// does not compile, and checks that every version of zklock's modules the
// docs tell a reader to fetch, or a module of the repository requires, is
// one the go command can fetch (TestVersionsResolve).
//
// A snippet is a ```go fenced block. One that starts with "package main"
// is built as it is: a full program must compile as pasted. Any other is a
// fragment: it becomes the body of
//
//	func fragment(ctx context.Context, s *zklock.Session) error
//
// in a file that imports nothing else under a name a snippet could use:
// a fragment starts with the import declarations of what it uses (zklock,
// fmt, ...), exactly what a reader pastes beside it, and they are checked
// as Go checks them (a missing one or an unused one fails the build). A
// fragment that declares functions or types (a test function, say) stays
// at the file's top level. A fragment must therefore compile in that
// function: declare what else it uses, end its error paths with return,
// and not leave "..." placeholders.
package doccheck
