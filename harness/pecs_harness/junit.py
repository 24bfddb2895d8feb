"""junit.xml of the driver's combined run: one <testsuite> per implementation, one
<testcase> per case as its gate judged it, and one per implementation for the gate's
problems that are no case's (stale or bad expectations lines, a run that broke), so a CI
system that reads JUnit fails exactly when the report's verdict is FAIL."""
import xml.etree.ElementTree as ET
from typing import Any

FAILURE = {"FAIL": "failure", "XPASS": "failure", "BROKEN": "error", "CRASH": "error"}
SKIPPED = frozenset({"UNSUPPORTED", "ENV_SKIP"})


def _case(suite: ET.Element, label: str, cid: str, r: dict[str, Any]) -> None:
    tc = ET.SubElement(suite, "testcase", classname="pecs." + label, name=cid)
    status = r["status"]
    if status in FAILURE:
        ET.SubElement(tc, FAILURE[status], message=status).text = r["message"]
    elif status in SKIPPED:
        ET.SubElement(tc, "skipped", message="%s: %s" % (status, r["message"]))
    elif status == "XFAIL":
        exp = r.get("expectation") or {}
        ET.SubElement(tc, "system-out").text = "XFAIL (%s): %s" % (
            exp.get("reason", ""), r["message"])


def _gate(suite: ET.Element, impl: dict[str, Any]) -> None:
    """The problems of the gate that are not a case's own status."""
    tc = ET.SubElement(suite, "testcase", classname="pecs." + impl["label"],
                       name="Gate.ExpectationsAndRun")
    own = [p for p in impl["problems"] if not p.split(" ", 1)[0] in FAILURE]
    if own:
        ET.SubElement(tc, "failure", message="%d problem(s)" % len(own)).text = "\n".join(own)
    if impl.get("root_cause"):
        ET.SubElement(tc, "system-out").text = "root cause: " + impl["root_cause"]


def write(summary: dict[str, Any], path: str) -> None:
    suites = ET.Element("testsuites")
    for impl in summary["implementations"]:
        label = impl["label"]
        suite = ET.SubElement(suites, "testsuite", name="pecs." + label)
        for cid, c in summary["cases"].items():
            r = c["results"].get(label)
            if r:
                _case(suite, label, cid, r)
        _gate(suite, impl)
        tests = len(suite)
        fails = sum(1 for tc in suite if tc.find("failure") is not None)
        errors = sum(1 for tc in suite if tc.find("error") is not None)
        skips = sum(1 for tc in suite if tc.find("skipped") is not None)
        suite.set("tests", str(tests))
        suite.set("failures", str(fails))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skips))
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
