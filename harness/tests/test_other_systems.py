"""examples/fault_injection on real systems: the static binary under qemu-user (no
perf_event_open) and as root of a user namespace with no /proc each reach a green gate with
their committed expectations files; the report names qemu's root cause and the facts the
namespace run assumed. Skips where the host lacks qemu-user or refuses user namespaces."""
import pathlib
import platform
import shutil
import subprocess

import pytest

from test_fault_injection import run_scenarios

QEMU = "qemu-" + platform.machine()


def user_namespaces() -> bool:
    r = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--fork", "sh", "-c",
                        "mount -t tmpfs none /proc"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"needs {QEMU} (apt-get install qemu-user)")
@pytest.mark.skipif(shutil.which("strace") is None, reason="run.sh needs strace")
@pytest.mark.skipif(shutil.which("unshare") is None or not user_namespaces(),
                    reason="needs user namespaces (unshare --user --map-root-user --mount)")
def test_qemu_user_and_a_user_namespace_without_proc_pass_their_gates(
        tmp_path: pathlib.Path) -> None:
    out, impls = run_scenarios(tmp_path, "qemu-user userns-noproc")
    qemu = impls["qemu-user"]
    assert qemu["root_cause"].startswith("open answered every call")
    assert qemu["root_cause"].endswith(" with -ENOSYS")
    assert qemu["counts"]["passed"] == 0 and qemu["counts"]["xfail"] > 200
    userns = impls["userns-noproc"]
    assert userns["root_cause"] is None
    # Every failure is the assumed privilege's, each listed with its reason.
    assert userns["counts"]["passed"] > 200 and userns["counts"]["xfail"] > 0
    assert "root cause: open answered every call" in out
    assert "userns-noproc: assumed host fact: privileged" in out
