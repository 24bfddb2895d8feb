"""The main of the vector-tool test targets: `pecs_vectors.tool ARGS` on the vectors in
the runfiles tree, under the registered Python toolchain (the //harness:pecs_vectors
dependency puts the package on the path)."""
import os
import sys

from pecs_vectors import tool


def main() -> int:
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    sys.dont_write_bytecode = True
    return tool.main(["--vectors-dir", os.path.join(root, "vectors")] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
