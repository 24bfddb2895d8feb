"""Captured vectors: the running kernel's answers to the capture tool's probes, written as
vectors/captured/linux_capture.json (area linux_capture, source linux-capture).

The probes and their tcIds live in conformance/tools/probes.c; this module only runs the
tool (as root and as uid 65534 with no capabilities), pairs each probe with its answer and
writes the file. crosscheck.py replays the same probe lines later."""
import json
import os
import subprocess
from typing import Any

from .execute import UNPRIV, _world_traversable_tmp

AREA = "linux_capture"
SCHEMA = "linux_capture.schema.json"
DEFAULT_FILE = os.path.join("vectors", "captured", "linux_capture.json")
# Unprivileged answers get their own tcIds: the same probe plus this.
UNPRIVILEGED_OFFSET = 1000

NOTES = {
    "Accepted": "The call succeeded on the captured kernel.",
    "Refused": "The call failed with the errno in expected.ret.",
    "SizeWriteBack": "E2BIG: the kernel wrote the attr size it knows into attr.size (expected.attr_size).",
    "ReadLayout": "The bytes read() returned for a disabled, never enabled event; event ids are "
                  "zeroed and listed in expected.dynamic.",
    "MetadataPage": "Fields of the mapping's first page; sizes in pages, so any page size compares.",
    "HostDependent": "The answer depends on privilege or sysctls: compare runs of the same "
                     "privilege and perf_event_paranoid.",
}


class CaptureError(Exception):
    pass


def default_tool(root: str) -> str:
    return os.path.join(root, "bazel-bin", "conformance", "tools", "pecs-capture")


def _run(argv: list[str], stdin_text: str | None = None, timeout: int = 300) -> str:
    try:
        p = subprocess.run(argv, input=stdin_text, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CaptureError("%s: %s" % (argv[0], e))
    if p.returncode not in (0, 1):
        raise CaptureError("%s exited with %d: %s" % (" ".join(argv[:2]), p.returncode,
                                                      p.stderr.strip()))
    return p.stdout


def list_probes(tool: str) -> list[dict[str, Any]]:
    probes = []
    for line in _run([tool, "--list"]).splitlines():
        tc, flags, comment, probe = line.split("\t")
        probes.append({"tcId": int(tc), "flags": flags.split(), "comment": comment, "probe": probe})
    return probes


def uname(tool: str, unprivileged: bool = False) -> dict[str, str]:
    release, machine = _run(_argv(tool, unprivileged, "--uname")).strip().split("\t")
    return {"release": release, "machine": machine}


class _Copy:
    """uid 65534 runs a copy of the tool from a directory it can reach."""

    def __init__(self, tool: str) -> None:
        import shutil
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="pecs-capture-", dir=_world_traversable_tmp(None))
        os.chmod(self.dir, 0o755)
        self.path = os.path.join(self.dir, "pecs-capture")
        shutil.copyfile(tool, self.path)
        os.chmod(self.path, 0o755)

    def close(self) -> None:
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)


def _argv(tool: str, unprivileged: bool, *args: str) -> list[str]:
    return (UNPRIV if unprivileged else []) + [tool] + list(args)


def replay(tool: str, probe_lines: list[str],
           unprivileged: bool = False) -> list[dict[str, Any]]:
    """Each probe line's answer (a dict), in order. unprivileged: as uid 65534 through
    setpriv, which needs root."""
    copy = _Copy(tool) if unprivileged else None
    try:
        out = _run(_argv(copy.path if copy else tool, unprivileged, "--replay"),
                   "".join(p + "\n" for p in probe_lines))
    finally:
        if copy:
            copy.close()
    answers = [json.loads(l) for l in out.splitlines() if l.strip()]
    if len(answers) != len(probe_lines):
        raise CaptureError("the tool answered %d of %d probes" % (len(answers), len(probe_lines)))
    for p, a in zip(probe_lines, answers):
        if a.get("ret") in ("error", "setup"):
            raise CaptureError("probe '%s' could not run: %s" % (p, a.get("error")))
    return answers


def _flags(table_flags: list[str], answer: dict[str, Any]) -> list[str]:
    keep = [f for f in table_flags if f not in ("Accepted", "Refused")]
    ok = not answer["ret"].startswith("-")
    return ["Accepted" if ok else "Refused"] + [f for f in keep if f != "SizeWriteBack" or
                                                answer["ret"] == "-E2BIG"]


def build_document(probes: list[dict[str, Any]],
                   runs: list[tuple[bool, dict[str, str], list[dict[str, Any]]]],
                   tool_ref: str = "conformance/tools/capture.c") -> dict[str, Any]:
    """runs: [(privileged, kernel, answers)] -> the vector file as a dict."""
    groups = []
    total = 0
    for privileged, kernel, answers in runs:
        by_op: dict[str, list[dict[str, Any]]] = {}
        for probe, answer in zip(probes, answers):
            op = probe["probe"].split()[0].split("=", 1)[1]
            tc = probe["tcId"] + (0 if privileged else UNPRIVILEGED_OFFSET)
            test = {"tcId": tc, "comment": probe["comment"], "flags": _flags(probe["flags"], answer),
                    "result": "invalid" if answer["ret"].startswith("-") else "valid",
                    "probe": probe["probe"], "expected": answer}
            by_op.setdefault(op, []).append(test)
        for op, tests in by_op.items():
            who = "root" if privileged else "uid 65534 without capabilities"
            groups.append({
                "type": "LinuxCaptureTest",
                "source": {"name": "linux-capture",
                           "ref": "%s on Linux %s %s as %s" % (tool_ref, kernel["release"],
                                                               kernel["machine"], who)},
                "kernel": kernel, "privileged": privileged, "op": op, "tests": tests})
            total += len(tests)
    return {"schema": SCHEMA, "area": AREA, "numberOfTests": total, "notes": NOTES,
            "testGroups": groups}


def capture(tool: str, out_path: str) -> dict[str, Any]:
    probes = list_probes(tool)
    lines = [p["probe"] for p in probes]
    runs = []
    if os.geteuid() == 0:
        runs.append((True, uname(tool), replay(tool, lines)))
        runs.append((False, uname(tool), replay(tool, lines, unprivileged=True)))
    else:
        runs.append((False, uname(tool), replay(tool, lines)))
    doc = build_document(probes, runs)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return doc
