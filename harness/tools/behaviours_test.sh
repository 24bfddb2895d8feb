#!/bin/sh
# docs/behaviours.md lists every behaviour a case covers, with a source, and its cases
# column matches the cases' declarations. Usage: behaviours_test.sh RUNNER
exec /usr/bin/python3 harness/tools/behaviours.py check --runner "$1"
