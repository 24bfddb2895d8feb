#!/bin/sh
# Bazel's --workspace_status_command (.bazelrc): the suite version the runners carry.
# STABLE_: a new commit relinks the runners that are stamped with it (main_standalone's),
# so their version is never stale; cc_tests are not stamped, so their cache is untouched.
# Offline and outside a git checkout (a tarball) it says "unknown".
v=$(git rev-parse --short=12 HEAD 2>/dev/null) || v=unknown
if [ "$v" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	v="$v-dirty"
fi
echo "STABLE_PECS_VERSION $v"
