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
	apt-get update -qq
	# shellcheck disable=SC2086 # missing is a list
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}
