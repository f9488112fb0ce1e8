// Package interop holds zklock's interoperability tests: zklock clients in
// the test process and real Apache Curator (Java) and Kazoo (Python)
// clients in separate processes contend on the same lock paths of a real
// ZooKeeper, and a checker reads their shared log to verify mutual
// exclusion, reader sharing, semaphore limits and single leadership.
//
// The package has no code of its own; see interop_test.go. It needs a JDK,
// Debian's libcurator-recipes-java and python3-kazoo, which
// scripts/install-deps.sh installs; without them its tests fail, they do not
// skip.
package interop
