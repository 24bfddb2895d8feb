# Sourced by fuzz/run.sh and fuzz/coverage.sh: the Debian packages they need (clang as
# `clang`, libFuzzer and the sanitizer runtimes, llvm-cov), installed when missing and
# run as root, otherwise named in an apt-get line.
fuzz_need_packages() {
	missing=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "fuzz: missing Debian packages; as root run:" >&2
		echo "  apt-get update && apt-get install -y$missing" >&2
		exit 2
	fi
	echo "fuzz: installing$missing" >&2
	# apt waits, bounded, for a lock another package manager holds (./pecs's own wait
	# says why: unattended upgrades on a fresh machine).
	wait="-o DPkg::Lock::Timeout=${PECS_LOCK_WAIT:-600}"
	# shellcheck disable=SC2086 # wait and missing are lists
	apt-get update -qq $wait
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $wait $missing >/dev/null
}
