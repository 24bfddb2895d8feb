"""crosscheck: replays every captured vector's probe on the running kernel and reports
each answer that differs from the one recorded, with both kernel releases.

A group captured as root is replayed as root; one captured unprivileged is replayed as
uid 65534 through setpriv (when we are root) or as ourselves (when we are not root). A
group whose privilege cannot be reproduced here is skipped and said so."""
import glob
import json
import os
import sys

from . import capture as cap


def vector_files(root, files):
    if files:
        return files
    return sorted(glob.glob(os.path.join(root, "vectors", "captured", "*.json")))


def check(tool, paths, out=sys.stdout):
    """Returns (agreed, differences, skipped) and prints a line per difference."""
    is_root = os.geteuid() == 0
    here = cap.uname(tool)
    agreed, differences, skipped = 0, [], []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("area") != cap.AREA:
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


def _show(answer, other):
    """The answer's fields that differ from other's, compactly."""
    keys = [k for k in answer if answer.get(k) != other.get(k)] or ["ret"]
    return ", ".join("%s=%s" % (k, json.dumps(answer.get(k))) for k in keys)


def main(args):
    tool = args.capture or cap.default_tool(args.root)
    if not os.path.isfile(tool):
        print("pecs_harness: no capture tool at %s: bazel build //conformance/tools:pecs-capture"
              % tool, file=sys.stderr)
        return 2
    paths = vector_files(args.root, args.files)
    if not paths:
        print("pecs_harness: no captured vectors (vectors/captured/*.json)", file=sys.stderr)
        return 2
    try:
        agreed, differences, skipped = check(tool, paths)
    except cap.CaptureError as e:
        print("pecs_harness: %s" % e, file=sys.stderr)
        return 2
    for s in skipped:
        print("skipped: " + s)
    print("crosscheck: %d captured vector(s) agree with this kernel, %d differ%s" % (
        agreed, len(differences), ", %d group(s) skipped" % len(skipped) if skipped else ""))
    return 1 if differences else 0
