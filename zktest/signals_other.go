//go:build !unix

package zktest

import "os"

// Without Unix signals a server can only be killed; Pause and Resume fail.
var (
	sigTerm os.Signal = os.Kill
	sigStop os.Signal
	sigCont os.Signal
)
