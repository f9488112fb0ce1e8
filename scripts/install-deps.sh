#!/usr/bin/env bash
# Installs what zklock's tests and lint need, and only what is missing:
#   - ZooKeeper 3.8 (Debian's zookeeper package: the jars under /usr/share/java
#     that zktest runs; no system service is started),
#   - a Java 17 runtime, if there is no java,
#   - staticcheck, into $(go env GOPATH)/bin, where the Makefile looks.
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

install_system_packages() {
	local need_zk="" need_java="" pkgs=()
	[ -f /usr/share/java/zookeeper.jar ] || need_zk=1
	command -v java >/dev/null 2>&1 || need_java=1
	[ -z "$need_zk$need_java" ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "ZooKeeper or Java is missing and this is not a Debian or Ubuntu system: install ZooKeeper 3.8 and Java 17 yourself and set ZOOKEEPER_HOME, or set ZK_SERVERS"
	say "updating apt's package lists"
	apt_quiet apt-get update -q
	[ -n "$need_zk" ] && pkgs+=(zookeeper)
	if [ -n "$need_java" ]; then
		# Debian 12's default runtime is 17; elsewhere ask for 17 by name.
		if apt-cache show openjdk-17-jre-headless >/dev/null 2>&1; then
			pkgs+=(openjdk-17-jre-headless)
		else
			pkgs+=(default-jre-headless)
		fi
	fi
	apt_install "${pkgs[@]}"
	[ -f /usr/share/java/zookeeper.jar ] || die "the zookeeper package did not install /usr/share/java/zookeeper.jar"
	command -v java >/dev/null 2>&1 || die "java is still missing after installing ${pkgs[*]}"
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

install_system_packages
install_staticcheck
