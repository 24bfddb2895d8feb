"""crosscheck: replays every captured vector's probe on the running kernel and reports
each answer that differs from the one recorded, with both kernel releases.

A group captured as root is replayed as root; one captured unprivileged is replayed as
uid 65534 through setpriv (when we are root) or as ourselves (when we are not root). A
group whose privilege cannot be reproduced here is skipped and said so."""
import argparse
import glob
import json
import os
import sys
from typing import Any, TextIO

from pecs_vectors import document

from . import capture as cap


def vector_files(root: str, files: list[str] | None) -> list[str]:
    if files:
        return files
    return sorted(glob.glob(os.path.join(root, "vectors", "captured", "*.json")))


# A vectors file that cannot be replayed; the message names it and says why.
BadFile = document.BadDocument


def load(path: str) -> dict[str, Any]:
    """The capture document at path, checked far enough that replaying it cannot trip over
    its shape; BadFile otherwise. A file without a single vector is bad too: replaying it
    would report "0 agree", which reads like a pass."""
    doc = document.read(path, cap.AREA)
    groups = doc["testGroups"]
    total = 0
    for n, group in enumerate(groups):
        try:
            ok = (isinstance(group["privileged"], bool) and isinstance(group["tests"], list) and
                  isinstance(group["kernel"]["release"], str) and
                  all(isinstance(t["tcId"], int) and isinstance(t["probe"], str) and
                      isinstance(t["expected"], dict) for t in group["tests"]))
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise BadFile("%s: testGroups[%d] lacks privileged, kernel.release or a test's "
                          "tcId, probe or expected" % (path, n))
        total += len(group["tests"])
    if total == 0:
        raise BadFile("%s: holds no vectors" % path)
    return doc


def check(tool: str, paths: list[str], out: TextIO | None = None,
          bad: list[str] | None = None) -> tuple[int, list[str], list[str]]:
    """Returns (agreed, differences, skipped) and prints a line per difference. A file that
    cannot be replayed is added to bad (a list of messages) when given, and the others are
    still checked; without bad, the first such file raises BadFile."""
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    is_root = os.geteuid() == 0
    here = cap.uname(tool)
    agreed = 0
    differences: list[str] = []
    skipped: list[str] = []
    for path in paths:
        try:
            doc = load(path)
        except BadFile as e:
            if bad is None:
                raise
            bad.append(str(e))
            continue
        for group in doc["testGroups"]:
            if group["privileged"] and not is_root:
                skipped.append("%s: %d root vectors (not root here)" % (path, len(group["tests"])))
                continue
            tests = group["tests"]
            answers = cap.replay(tool, [t["probe"] for t in tests],
                                 unprivileged=is_root and not group["privileged"])
            for t, got in zip(tests, answers):
                if got == t["expected"]:
                    agreed += 1
                    continue
                line = ("%s: tcId %d (%s; %s): Linux %s gave %s, this kernel (Linux %s) gives %s" % (
                    os.path.basename(path), t["tcId"], t["probe"],
                    "root" if group["privileged"] else "unprivileged",
                    group["kernel"]["release"], _show(t["expected"], got),
                    here["release"], _show(got, t["expected"])))
                differences.append(line)
                print(line, file=out)
    return agreed, differences, skipped


def _show(answer: dict[str, Any], other: dict[str, Any]) -> str:
    """The answer's fields that differ from other's, compactly."""
    keys = [k for k in answer if answer.get(k) != other.get(k)] or ["ret"]
    return ", ".join("%s=%s" % (k, json.dumps(answer.get(k))) for k in keys)


def main(args: argparse.Namespace) -> int:
    tool = args.capture or cap.default_tool(args.root)
    if not os.path.isfile(tool):
        print("pecs_harness: no capture tool at %s: bazel build //conformance/tools:pecs-capture"
              % tool, file=sys.stderr)
        return 2
    paths = vector_files(args.root, args.files)
    if not paths:
        print("pecs_harness: no captured vectors (vectors/captured/*.json)", file=sys.stderr)
        return 2
    bad: list[str] = []
    try:
        agreed, differences, skipped = check(tool, paths, bad=bad)
    except cap.CaptureError as e:
        print("pecs_harness: %s" % e, file=sys.stderr)
        return 2
    for s in skipped:
        print("skipped: " + s)
    for b in bad:
        print("pecs_harness: crosscheck: %s" % b, file=sys.stderr)
    print("crosscheck: %d captured vector(s) agree with this kernel, %d differ%s%s" % (
        agreed, len(differences), ", %d group(s) skipped" % len(skipped) if skipped else "",
        ", %d file(s) unreadable" % len(bad) if bad else ""))
    if bad:
        return 2
    return 1 if differences else 0
