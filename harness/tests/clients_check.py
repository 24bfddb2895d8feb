"""The main of //harness:clients_test: `pecs_harness.clients` on the built interposer
and workload, gated on ref: perf stat under the interposer with ref agrees with perf
stat on the kernel (clocks within 5%, page faults within 10%)."""
import os
import sys

from pecs_harness import clients


def main() -> int:
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    sys.dont_write_bytecode = True
    return clients.main(["--lib", os.path.join(root, "interpose/libpecs_interpose.so"),
                         "--spin", os.path.join(root, "interpose/spin"),
                         "--spin-nofp", os.path.join(root, "interpose/spin_nofp"),
                         "--impl", "ref"])


if __name__ == "__main__":
    sys.exit(main())
