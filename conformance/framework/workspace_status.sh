#!/bin/sh
# Bazel's --workspace_status_command (.bazelrc): the suite version the runners carry.
# STABLE_: under --stamp (.bazelrc's `stamped` config) a new commit relinks the runners, so
# their version is never stale; the default tree is not stamped, so its tests stay cached.
# Offline and outside a git checkout (a tarball) it says "unknown".
v=$(git rev-parse --short=12 HEAD 2>/dev/null) || v=unknown
if [ "$v" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	v="$v-dirty"
fi
echo "STABLE_PECS_VERSION $v"
