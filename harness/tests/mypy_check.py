"""The main of //harness:mypy_test: mypy over harness/ with harness/mypy.ini.

mypy is Debian's package (`apt-get install -y mypy`; ./pecs test installs it). When it is
missing the test fails and says how to install it: a skipped type check would pass code
that was never checked."""
import importlib.util
import os
import subprocess
import sys


def main() -> int:
    if importlib.util.find_spec("mypy") is None:
        print("mypy_test: mypy is not installed for %s; as root run:\n"
              "  apt-get update && apt-get install -y mypy\n"
              "(./pecs test installs it)" % sys.executable, file=sys.stderr)
        return 1
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    cache = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "mypy_cache")
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini",
                           "--cache-dir", cache], cwd=os.path.join(root, "harness")).returncode


if __name__ == "__main__":
    sys.exit(main())
