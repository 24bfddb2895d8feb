"""Finding the runners and making sure each can start before anything runs.

A runner that is not there, a plugin file that is missing, or a runner that refuses the
implementation before running a case (an unknown feature claim, a vtable it cannot use)
is a setup error: the driver says so in one line and exits 2, writing no report, since
no case ran and nothing regressed."""
import os
import shutil
import subprocess

from . import execute
from .impls import Impl


class SetupError(Exception):
    """The run cannot start; the message is the one line the user sees."""


def _one_line(text: str) -> str:
    return "; ".join(l.strip() for l in text.splitlines() if l.strip())


def check(impl: Impl) -> list[str]:
    """The case ids impl's runner holds; SetupError when it cannot start."""
    runner = impl.argv[0] if impl.argv else ""
    if not os.path.isfile(runner):
        raise SetupError("%s: no runner at %s: build it (./pecs run builds the ones it "
                         "names) or pass --runner NAME=PATH" % (impl.label, runner or "(none)"))
    if not os.access(runner, os.X_OK):
        raise SetupError("%s: %s is not executable" % (impl.label, runner))
    if impl.kind == "plugin" and "--plugin" in impl.argv:
        so = impl.argv[impl.argv.index("--plugin") + 1]
        if not os.path.isfile(so):
            raise SetupError("%s: no plugin at %s" % (impl.label, so))
    if impl.unprivileged and os.geteuid() != 0:
        raise SetupError("%s: needs root to drop to uid 65534 (setpriv); run as root" %
                         impl.label)
    if impl.unprivileged and not shutil.which("setpriv"):
        raise SetupError("%s: setpriv not found (Debian package util-linux)" % impl.label)
    try:
        return execute.list_cases(impl.argv, execute.merged_env(impl.env))
    except subprocess.TimeoutExpired:
        raise SetupError("%s: %s did not list its cases in time" % (impl.label, runner))
    except (OSError, RuntimeError) as e:
        raise SetupError("%s: the runner cannot start: %s" % (impl.label, _one_line(str(e))))


def suite_ids(root: str) -> set[str]:
    """Every case id of this checkout's suite, from any built runner (they all link the same
    cases); empty when none is built or none starts here. Results imported from a filtered
    run do not list every case, so stale lines are judged against these too."""
    for base in (os.path.join(root, "bazel-bin"), root):  # a checkout, or Bazel's runfiles
        for rel in ("conformance/pecs-syscall", "conformance/pecs-ref"):
            path = os.path.join(base, rel)
            if not os.path.isfile(path):
                continue
            try:
                return set(execute.list_cases([path], execute.merged_env({})))
            except (OSError, RuntimeError, subprocess.TimeoutExpired):
                continue  # it does not start here: judge by the results alone
    return set()
