#!/bin/sh
echo "pecs: Bazel coverage tooling is not available offline" >&2
exit 1
