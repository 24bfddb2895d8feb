"""Writing the report files of one summary: summary.json, report.md, report.html and
junit.xml, each a view of the model's JSON."""
import json
import os
from typing import Any

from . import clients_report, junit, report_html, report_md


def write_reports(summary: dict[str, Any], out: str, baseline: dict[str, Any] | None = None,
                  source_root: str = "..") -> None:
    """baseline: an earlier summary, whose differences report.html shows; source_root:
    the checkout as seen from out, for the links to each case's source line."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(report_md.render(summary))
        f.write(clients_report.report_section(out))  # ./pecs clients' results, when there
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as f:
        f.write(report_html.render(summary, clients_report.load(out), baseline, source_root))
    junit.write(summary, os.path.join(out, "junit.xml"))
