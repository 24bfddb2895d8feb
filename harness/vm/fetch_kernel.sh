#!/bin/sh
# Fetches a Debian kernel image for the VM runner (--impl vm:...) without installing it:
# apt-get download, then dpkg-deb -x into DIR. Needs no root beyond apt's own lists.
# Usage: fetch_kernel.sh [PACKAGE | X.Y] [DIR]; prints the image's path on the last line.
# X.Y (or nothing, for 6.1) takes the newest linux-image-X.Y*-cloud-amd64-unsigned apt
# offers: Debian names 6.1's by ABI (linux-image-6.1.0-57-cloud-amd64-unsigned) and
# 6.12's by release (linux-image-6.12.118+deb12-cloud-amd64-unsigned).
set -eu
pkg=${1:-6.1}
dir=${2:-out/vm}
case $pkg in
[0-9]*.[0-9]*)
	line=$pkg
	re=$(printf '%s' "$line" | sed 's/\./\\./g')
	pkg=$(apt-cache pkgnames "linux-image-$line." |
		grep -E "^linux-image-$re\.[0-9]+(-[0-9]+)?(\+deb[0-9]+)?-cloud-amd64-unsigned\$" |
		sort -V | tail -n 1)
	[ -n "$pkg" ] || {
		echo "fetch_kernel.sh: apt offers no linux-image-$line.*-cloud-amd64" >&2
		exit 1
	}
	;;
esac
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# Fetched before: the package's files are all that is needed.
for image in "$dir/$pkg"/boot/vmlinuz-*; do
	[ -f "$image" ] && { echo "$image"; exit 0; }
done
# apt's _apt user must be able to write where it downloads, so fetch into a fresh /tmp dir.
tmp=$(mktemp -d /tmp/pecs-kernel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"
(cd "$tmp" && apt-get download -q "$pkg" >/dev/null)
dpkg-deb -x "$tmp"/*.deb "$dir/$pkg"
image=$(ls "$dir/$pkg"/boot/vmlinuz-* | head -n 1)
[ -f "$image" ] || { echo "fetch_kernel.sh: no vmlinuz in $pkg" >&2; exit 1; }
echo "$image"
