"""The main of every Python test target: pytest on the files named in the arguments, run
by the interpreter of the registered py_runtime (Debian's /usr/bin/python3).

Paths are relative to the workspace root inside the runfiles tree; JUnit goes where
Bazel asks ($XML_OUTPUT_FILE) and temporary files under $TEST_TMPDIR. The packages come
from the target's py_library deps, whose `imports` Bazel's launcher puts on the path and
exports as PYTHONPATH, so the tools the tests start as subprocesses find them too."""
import os
import sys


def main() -> int:
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    os.chdir(root)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    os.environ.setdefault("PECS_VECTORS_DIR", os.path.join(root, "vectors"))
    import pytest  # Debian's python3-pytest

    args = ["-q", "-p", "no:cacheprovider",
            "--basetemp=" + os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "pytest")]
    if os.environ.get("XML_OUTPUT_FILE"):
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    return int(pytest.main(args + sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
