"""Helpers for the harness's own tests: where the toy runner is, building it if needed.

Under Bazel the runner comes built (//harness:pecs-toy in the runfiles); run by hand from a
checkout, it is compiled once with gcc from the framework, the syscall adapter and
harness/tests/toy/toy_cases.c."""
import glob
import os
import subprocess

from .cli import ROOT

TOY_EXPECTATIONS = os.path.join(ROOT, "harness", "tests", "toy", "toy.txt")


def toy_runner(build_dir: str) -> str:
    env = os.environ.get("PECS_TOY_RUNNER")
    if env:
        return os.path.abspath(env)
    built = os.path.join(ROOT, "harness", "pecs-toy")
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    out = os.path.join(build_dir, "pecs-toy")
    if not os.path.isfile(out):
        fw = [p for p in glob.glob(os.path.join(ROOT, "conformance", "framework", "*.c"))
              if not os.path.basename(p).startswith("main_cmocka")]
        # Bazel generates the suite version; a runner built by hand has none.
        version = os.path.join(build_dir, "suite_version.c")
        with open(version, "w", encoding="utf-8") as f:
            f.write('const char pecs_suite_version[] = "unknown";\n')
        cmd = (["gcc", "-std=gnu11", "-O1", "-I", os.path.join(ROOT, "conformance", "include"),
                "-I", os.path.join(ROOT, "abi", "include"),
                "-I", os.path.join(ROOT, "conformance", "framework")] + sorted(fw) + [version] +
               [os.path.join(ROOT, "conformance", "adapters", "syscall.c"),
                os.path.join(ROOT, "harness", "tests", "toy", "toy_cases.c"), "-o", out, "-lm"])
        subprocess.run(cmd, check=True)
    return out


def capture_tool(build_dir: str) -> str:
    """The capture tool: Bazel's (runfiles or bazel-bin), else compiled once with gcc."""
    env = os.environ.get("PECS_CAPTURE_TOOL")
    if env:
        return os.path.abspath(env)
    for built in (os.path.join(ROOT, "conformance", "tools", "pecs-capture"),
                  os.path.join(ROOT, "bazel-bin", "conformance", "tools", "pecs-capture")):
        if os.path.isfile(built) and os.access(built, os.X_OK):
            return built
    out = os.path.join(build_dir, "pecs-capture")
    if not os.path.isfile(out):
        tools = sorted(glob.glob(os.path.join(ROOT, "conformance", "tools", "*.c")))
        cmd = (["gcc", "-std=gnu11", "-O1", "-I", os.path.join(ROOT, "conformance", "include"),
                "-I", os.path.join(ROOT, "abi", "include")] +
               tools + [os.path.join(ROOT, "conformance", "adapters", "syscall.c"),
                        os.path.join(ROOT, "conformance", "framework", "impl_check.c"),
                        "-o", out])
        subprocess.run(cmd, check=True)
    return out
