"""The main of the vector-tool test targets: `pecs_vectors.tool ARGS` on the vectors in
the runfiles tree, under the registered Python toolchain."""
import os
import sys


def main():
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    sys.path.insert(0, os.path.join(root, "harness"))
    sys.dont_write_bytecode = True
    from pecs_vectors import tool

    return tool.main(["--vectors-dir", os.path.join(root, "vectors")] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
