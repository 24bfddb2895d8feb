#!/bin/sh
# docs/features.txt -> a C table, so the runners refuse exactly the names the list holds.
# Usage: features_gen.sh features.txt out.c
set -eu
{
	echo '/* Generated from docs/features.txt by features_gen.sh: do not edit. */'
	echo '#include <stddef.h>'
	echo 'const char *const pecs_known_features[] = {'
	grep -v '^#' "$1" | awk 'NF { printf "\t\"%s\",\n", $1 }'
	echo '	NULL,'
	echo '};'
} > "$2"
