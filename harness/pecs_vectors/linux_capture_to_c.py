"""C emitter for area linux_capture (vectors/captured/): none on purpose.

Captured vectors are a kernel's answers to replayable probes; the harness replays them
(`python3 -m pecs_harness crosscheck`), no C case reads them, so to_c.py only needs to know
the area exists."""
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # to_c.py loads this module; it needs no import back at run time
    from pecs_vectors.to_c import CSource


def emit_linux_capture(docs: list[dict[str, Any]], c: "CSource") -> None:
    n = sum(len(g["tests"]) for d in docs for g in d["testGroups"])
    c.add("/* %d linux_capture vectors: checked by the harness's crosscheck, not compiled in. */" % n)


EMITTERS = {"linux_capture": emit_linux_capture}
