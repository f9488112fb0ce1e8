package main

// Exit codes of zklock itself. Every other code is the child's own: run and
// elect exit with exactly the code their command exited with.
const (
	exitOK       = 0
	exitUsage    = 2   // bad flags or arguments; nothing was done
	exitBusy     = 122 // --try: another owner holds the lock or waits for it
	exitLost     = 123 // the lock or leadership was lost while the command ran
	exitTimeout  = 124 // --timeout passed before the lock was acquired
	exitError    = 125 // zklock failed: ZooKeeper unreachable, bad path, ...
	exitNoExec   = 126 // the command was found but could not be started
	exitNotFound = 127 // the command was not found
	exitSignal   = 128 // plus N: the command was killed by signal N, or zklock got N while waiting
)
