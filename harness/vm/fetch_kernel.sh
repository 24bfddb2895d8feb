#!/bin/sh
# Fetches a Debian kernel image for the VM runner (--impl vm:...) without installing it:
# apt-get download, then dpkg-deb -x into DIR. Needs no root beyond apt's own lists.
# Usage: fetch_kernel.sh [PACKAGE] [DIR]; prints the image's path on the last line.
# PACKAGE defaults to the newest linux-image-6.1.*-cloud-amd64-unsigned apt offers.
set -eu
pkg=${1:-}
dir=${2:-out/vm}
if [ -z "$pkg" ]; then
	pkg=$(apt-cache pkgnames linux-image-6.1 | grep -E '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' |
		sort -t- -k4,4n | tail -n 1)
	[ -n "$pkg" ] || { echo "fetch_kernel.sh: apt offers no linux-image-6.1.*-cloud-amd64" >&2; exit 1; }
fi
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
