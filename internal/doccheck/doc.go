// Package doccheck has no code: its test builds every Go snippet of the
// README and of docs/*.md, so that the documentation never shows code that
// does not compile.
//
// A snippet is a ```go fenced block. One that starts with "package main"
// is built as it is. Any other is a fragment: it becomes the body of
//
//	func fragment(ctx context.Context, s *zklock.Session) error
//
// in a file that imports context, errors, fmt, log, os, sync, time and
// zklock (each used once by the file itself, so a
// fragment need not use them all); import declarations at the top of a
// fragment are lifted into that file, and a fragment that then declares
// functions or types (a test function, say) stays at the file's top level. A fragment must therefore compile in
// that function: declare what else it uses, end its error paths with
// return, and not leave "..." placeholders.
package doccheck
