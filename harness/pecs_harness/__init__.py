"""pecs_harness: runs the conformance suite against implementations, gates the results
against their expectations files and writes the report (Markdown, HTML, JSON).

`/usr/bin/python3 -m pecs_harness --help` from harness/ (or with PYTHONPATH=harness)."""
