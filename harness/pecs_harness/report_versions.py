"""What kind of difference a result that did not pass is, for the version matrix.

The report shows Linux in more than one version beside the implementations (the host's
kernel, a kernel image in a VM: vm.py). A case that did not pass is one of:

- a version difference: the behaviour does not exist yet in the Linux that ran, and the
  case said so, naming the version (ENV_SKIP or UNSUPPORTED "... before Linux 6.12");
  where Linux only changed its answer the case expects that version's answer and passes;
- a kernel bug fixed later: listed in that kernel's expectations file with a reason that
  starts "kernel bug" and cites the fix (conformance/expectations/linux-6.1.txt);
- a divergence: everything else that failed, listed or not.

ENV_SKIP for any other reason (no privilege, no KVM) is none of these: None.
"""
import re
from typing import Any

VERSION = "version difference"
FIXED_LATER = "kernel bug fixed later"
DIVERGENCE = "divergence"

_NAMES_A_VERSION = re.compile(r"\bLinux \d+\.\d+\b")
_FAILED = frozenset({"FAIL", "XPASS", "BROKEN", "CRASH"})


def kind(result: dict[str, Any]) -> str | None:
    """The kind of one result in summary.json's cases[id]["results"][label], or None."""
    status = result.get("status")
    if status in ("ENV_SKIP", "UNSUPPORTED"):
        return VERSION if _NAMES_A_VERSION.search(result.get("message") or "") else None
    if status == "XFAIL":
        reason = (result.get("expectation") or {}).get("reason", "")
        return FIXED_LATER if reason.lower().startswith("kernel bug") else DIVERGENCE
    return DIVERGENCE if status in _FAILED else None


def label(result: dict[str, Any]) -> str:
    """The status as the report's tables show it: "XFAIL (kernel bug fixed later)"."""
    k = kind(result)
    return "%s (%s)" % (result["status"], k) if k else str(result["status"])
