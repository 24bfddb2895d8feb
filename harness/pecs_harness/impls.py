"""The implementations the harness can run, named on the command line by a spec:

  ref                         the reference engine (bazel-bin/conformance/pecs-ref)
  ref-unprivileged            the reference engine as uid 65534 with no capabilities: it
                              reads its policy from the host as the kernel does (root only)
  syscall                     this kernel, as the calling user (the static runner if built)
  syscall-unprivileged        this kernel as uid 65534 with no capabilities (setpriv; root only)
  starnix_snapshot            the divergent example plugin (examples/starnix_snapshot)
  plugin:[LABEL=]PATH.so      any plugin, through the plugin runner
  pipe:[LABEL=]COMMAND        a pipe testee command, through the pipe runner
  runner:[LABEL=]PATH         any standalone runner (pecs-<name> of pecs_conformance_suite)
  import:[LABEL=]FILE[,FILE]  results written elsewhere (the static binary inside another
                              system); several files are shards of one run
  vm:[LABEL=]KERNEL           a Linux kernel image booted in qemu: LABEL as root and
                              LABEL-unprivileged (vm.py; `run` only)

Each gets a label (the column in the report) and, by default, the expectations file
conformance/expectations/<label>.txt when it exists (syscall-unprivileged uses syscall.txt
and ref-unprivileged ref.txt, whose [unprivileged] conditions select their lines).
"""
import glob
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field


class SpecError(Exception):
    pass


@dataclass(frozen=True)
class Impl:
    """One implementation as named on the command line. The driver gives it its final label
    and expectations file with dataclasses.replace, never by assignment."""
    label: str
    kind: str
    argv: list[str] = field(default_factory=list)  # the runner command, without run options
    env: dict[str, str] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # result files, for kind "import"
    unprivileged: bool = False
    source: str = ""
    expectations: str | None = None


def _first_existing(paths: list[str]) -> str | None:
    for p in paths:
        if p and os.path.isfile(p):
            return p
    return None


class Locator:
    """Where the built runners are: bazel-bin of the checkout unless told otherwise, or
    the root itself when it is pecs's tree in Bazel's runfiles (`bazel run
    @pecs//harness:driver` from another workspace), which has no bazel-bin."""

    def __init__(self, root: str, bin_dir: str | None = None,
                 overrides: dict[str, str] | None = None) -> None:
        self.root = root
        self.bin = bin_dir or os.path.join(root, "bazel-bin")
        if not bin_dir and not os.path.isdir(self.bin):
            self.bin = root
        self.overrides = overrides or {}   # runner name -> path

    def runner(self, name: str, *candidates: str) -> str:
        if name in self.overrides:
            return self.overrides[name]
        paths = [os.path.join(self.bin, c) for c in candidates]
        found = _first_existing(paths)
        if not found:
            raise SpecError("no %s runner: looked for %s; build it with bazel build" %
                            (name, ", ".join(paths)))
        return found

    def example_plugin(self) -> str:
        pats = [os.path.join(self.bin, "examples", "starnix_snapshot", p)
                for p in ("*.so", "*/*.so")]
        for p in pats:
            found = sorted(glob.glob(p))
            if found:
                return found[0]
        raise SpecError("the starnix_snapshot example plugin is not built (looked for %s)" %
                        " and ".join(pats))


def _label_value(arg: str, default_label: Callable[[str], str]) -> tuple[str, str]:
    label, eq, value = arg.partition("=")
    if eq and label and "/" not in label and " " not in label:
        return label, value
    return default_label(arg), arg


def _plugin_label(path: str) -> str:
    base = os.path.basename(path)
    for cut in (".so",):
        if base.endswith(cut):
            base = base[: -len(cut)]
    return base[3:] if base.startswith("lib") else base


def parse(spec: str, loc: Locator) -> Impl:
    kind, colon, arg = spec.partition(":")
    if kind in ("ref", "ref-unprivileged") and not colon:
        unpriv = kind == "ref-unprivileged"
        return Impl(kind, kind, [loc.runner("ref", "conformance/pecs-ref")],
                    unprivileged=unpriv,
                    source="reference engine" + (" as uid 65534, no capabilities" if unpriv
                                                 else ""))
    if kind in ("syscall", "syscall-unprivileged") and not colon:
        binary = loc.runner("syscall", "conformance/pecs-syscall-static", "conformance/pecs-syscall")
        unpriv = kind == "syscall-unprivileged"
        return Impl(kind, kind, [binary], unprivileged=unpriv,
                    source="this kernel" + (" as uid 65534, no capabilities" if unpriv else ""))
    if kind == "starnix_snapshot" and not colon:
        kind, arg = "plugin", "starnix_snapshot=" + loc.example_plugin()
    if kind == "plugin":
        label, path = _label_value(arg, _plugin_label)
        if not path:
            raise SpecError("plugin: needs a path: plugin:[LABEL=]PATH.so")
        runner = loc.runner("plugin", "conformance/adapters/plugin/pecs-plugin",
                             "conformance/adapters/pecs-plugin", "conformance/pecs-plugin")
        return Impl(label, "plugin", [runner, "--plugin", os.path.abspath(path)],
                    source="plugin " + path)
    if kind == "pipe":
        label, cmd = _label_value(arg, lambda c: os.path.basename(shlex.split(c)[0]) if c.strip() else "")
        if not cmd.strip():
            raise SpecError("pipe: needs a command: pipe:[LABEL=]COMMAND")
        runner = loc.runner("pipe", "conformance/adapters/pipe/pecs-pipe",
                             "conformance/adapters/pecs-pipe", "conformance/pecs-pipe")
        return Impl(label, "pipe", [runner], env={"PECS_TESTEE": cmd}, source="pipe testee " + cmd)
    if kind == "runner":
        label, path = _label_value(arg, lambda p: os.path.basename(p).replace("pecs-", "", 1))
        if not path:
            raise SpecError("runner: needs a path: runner:[LABEL=]PATH")
        if not os.path.isfile(path):
            raise SpecError("runner: no such file %s" % path)
        return Impl(label, "runner", [os.path.abspath(path)], source="runner " + path)
    if kind == "import":
        label, files = _label_value(arg, lambda a: "")
        paths = [p for p in files.split(",") if p]
        if not paths:
            raise SpecError("import: needs results files: import:[LABEL=]FILE[,FILE...]")
        # No label yet ("") when none was given: the driver takes the results file's.
        return Impl(label, "import", imports=paths, source="results from " + ", ".join(paths))
    if kind == "vm":  # a kernel image booted in qemu: vm.py
        from . import vm
        return vm.parse(arg, loc)
    raise SpecError("unknown implementation spec '%s' (see --help)" % spec)


def default_expectations(root: str, label: str) -> str | None:
    name = {"syscall-unprivileged": "syscall", "ref-unprivileged": "ref"}.get(label, label)
    path = os.path.join(root, "conformance", "expectations", name + ".txt")
    if not os.path.isfile(path):
        return None
    # Relative to where we run when it is below it: that is how people name the file.
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path
