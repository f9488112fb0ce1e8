#!/usr/bin/env bash
# Installs what zklock's tests and lint need, and only what is missing:
#   - ZooKeeper 3.8 (Debian's zookeeper package: the jars under /usr/share/java
#     that zktest runs; no system service is started),
#   - a Java 17 runtime, if there is no java,
#   - PostgreSQL (Debian's postgresql package) for the fence module's tests,
#     which start their own servers (fence/pgtest: initdb into a temporary
#     directory); the package's own cluster is not started,
#   - for the interop tests (interop/): a JDK (javac), Apache Curator's
#     recipes (Debian's libcurator-recipes-java, Curator 5.4, jars under
#     /usr/share/java) and Kazoo for the system Python (python3-kazoo, used
#     by /usr/bin/python3, not by whatever python3 comes first on PATH),
#   - staticcheck, into $(go env GOPATH)/bin, where the Makefile looks,
#   - with --bench, for the peer benchmarks (bench/, make bench): also etcd
#     (Debian's etcd-server, 3.4) and Redis (redis-server); no service of
#     either is started, the benchmark runs its own on 127.0.0.1.
# With --demo (make demo) only what examples/quickstart needs: ZooKeeper and
# a Java runtime (no JDK, Curator, Kazoo nor staticcheck), and nothing when
# ZK_SERVERS names a ZooKeeper to use instead.
# Idempotent: a second run installs nothing and prints nothing. apt is used on
# Debian and Ubuntu, through sudo unless already root; 'apt-get update' runs
# only when a package is actually missing.
set -euo pipefail

say() { printf 'install-deps: %s\n' "$*"; }
die() { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run: $* (run this script as root, or install sudo)"
	fi
}

# Quiet apt: its output is shown only if it fails.
apt_quiet() {
	local log
	log="$(mktemp)"
	if ! as_root env DEBIAN_FRONTEND=noninteractive "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		die "failed: $*"
	fi
	rm -f "$log"
}

# apt-get update, at most once per run.
apt_updated=""
apt_update() {
	[ -n "$apt_updated" ] && return 0
	say "updating apt's package lists"
	apt_quiet apt-get update -q
	apt_updated=1
}

# A policy-rc.d that answers 101 keeps packages from starting services while
# they install; one already present is left alone.
apt_install() {
	local policy=/usr/sbin/policy-rc.d added=""
	if [ ! -e "$policy" ]; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
		added=1
	fi
	say "installing $* with apt"
	apt_quiet apt-get install -y -q --no-install-recommends "$@"
	if [ -n "$added" ]; then
		as_root rm -f "$policy"
	fi
}

# install_system_packages installs what is missing: ZooKeeper and Java, and
# unless $demo the JDK, Curator and Kazoo of the interop tests and
# PostgreSQL for the fence's.
install_system_packages() {
	local need_zk="" need_java="" need_javac="" need_curator="" need_kazoo="" need_pg="" pkgs=()
	[ -f /usr/share/java/zookeeper.jar ] || need_zk=1
	command -v java >/dev/null 2>&1 || need_java=1
	if [ -z "$demo" ]; then
		command -v javac >/dev/null 2>&1 || need_javac=1
		[ -f /usr/share/java/curator-recipes.jar ] || need_curator=1
		have_kazoo || need_kazoo=1
		have_postgres || need_pg=1
	fi
	[ -z "$need_zk$need_java$need_javac$need_curator$need_kazoo$need_pg" ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "ZooKeeper, Java, Curator, Kazoo or PostgreSQL is missing and this is not a Debian or Ubuntu system: install ZooKeeper 3.8, a Java 17 JDK, Curator 5, Kazoo and PostgreSQL yourself and set ZOOKEEPER_HOME (or ZK_SERVERS) and PGTEST_BINDIR"
	apt_update
	[ -n "$need_zk" ] && pkgs+=(zookeeper)
	# A JDK brings its runtime: ask for one package, not both.
	if [ -n "$need_javac" ]; then
		# Debian 12's default JDK is 17; elsewhere ask for 17 by name.
		if apt-cache show openjdk-17-jdk-headless >/dev/null 2>&1; then
			pkgs+=(openjdk-17-jdk-headless)
		else
			pkgs+=(default-jdk-headless)
		fi
	elif [ -n "$need_java" ]; then
		if apt-cache show openjdk-17-jre-headless >/dev/null 2>&1; then
			pkgs+=(openjdk-17-jre-headless)
		else
			pkgs+=(default-jre-headless)
		fi
	fi
	[ -n "$need_curator" ] && pkgs+=(libcurator-recipes-java)
	[ -n "$need_kazoo" ] && pkgs+=(python3-kazoo)
	[ -n "$need_pg" ] && pkgs+=(postgresql)
	apt_install "${pkgs[@]}"
	[ -f /usr/share/java/zookeeper.jar ] || die "the zookeeper package did not install /usr/share/java/zookeeper.jar"
	command -v java >/dev/null 2>&1 || die "java is still missing after installing ${pkgs[*]}"
	[ -n "$demo" ] && return 0
	command -v javac >/dev/null 2>&1 || die "javac is still missing after installing ${pkgs[*]}"
	[ -f /usr/share/java/curator-recipes.jar ] || die "the libcurator-recipes-java package did not install /usr/share/java/curator-recipes.jar"
	have_kazoo || die "/usr/bin/python3 still cannot import kazoo after installing ${pkgs[*]}"
	have_postgres || die "the postgresql package did not install initdb and postgres under /usr/lib/postgresql/*/bin"
}

# PostgreSQL's server binaries, where fence/pgtest looks for them:
# PGTEST_BINDIR, initdb and postgres on PATH, or Debian's
# /usr/lib/postgresql/NN/bin (Debian puts only the client tools on PATH).
have_postgres() {
	local d
	for d in ${PGTEST_BINDIR:-} "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")" /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/postgres" ] && return 0
	done
	return 1
}

# Kazoo must be importable by the system Python: the interop tests run
# /usr/bin/python3, since a pyenv or virtualenv python3 on PATH does not see
# Debian's packages.
have_kazoo() {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1
}

# staticcheck goes to the GOPATH of the user who runs make: under sudo that
# is SUDO_USER, not root.
install_staticcheck() {
	command -v go >/dev/null 2>&1 || die "go is not on PATH: install Go first (see go.mod for the version)"
	local run=()
	if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
		run=(sudo -u "$SUDO_USER" -H env "PATH=$PATH")
	fi
	local bin
	bin="$("${run[@]+"${run[@]}"}" go env GOPATH)/bin"
	[ -x "$bin/staticcheck" ] && return 0
	say "installing staticcheck into $bin"
	"${run[@]+"${run[@]}"}" env GOBIN="$bin" go install honnef.co/go/tools/cmd/staticcheck@latest ||
		die "go install honnef.co/go/tools/cmd/staticcheck@latest failed"
}

# The servers bench/ compares zklock against; its Java and Python drivers use
# the JDK, Curator and Kazoo installed above.
install_bench_packages() {
	local pkgs=()
	[ -x /usr/bin/etcd ] || pkgs+=(etcd-server)
	[ -x /usr/bin/redis-server ] || pkgs+=(redis-server)
	[ ${#pkgs[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "${pkgs[*]} missing and this is not a Debian or Ubuntu system: install etcd 3.4+ and redis-server yourself (bench/ looks in /usr/bin)"
	apt_update
	apt_install "${pkgs[@]}"
	[ -x /usr/bin/etcd ] || die "the etcd-server package did not install /usr/bin/etcd"
	[ -x /usr/bin/redis-server ] || die "the redis-server package did not install /usr/bin/redis-server"
}

bench="" demo=""
for arg in "$@"; do
	case "$arg" in
	--bench) bench=1 ;;
	--demo) demo=1 ;;
	*) die "unknown argument $arg (usage: install-deps.sh [--bench | --demo])" ;;
	esac
done
[ -n "$bench" ] && [ -n "$demo" ] && die "--bench and --demo exclude each other"

if [ -n "$demo" ]; then
	[ -n "${ZK_SERVERS:-}" ] && exit 0 # the demo uses that ZooKeeper
	install_system_packages
	exit 0
fi
install_system_packages
[ -n "$bench" ] && install_bench_packages
install_staticcheck
