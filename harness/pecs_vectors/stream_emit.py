"""What every profiler-stream vector shares: the notes, the references, the sample
settings, and emit(), which writes one test in the common streamTest shape."""

from collections.abc import Iterable

from . import document
from .stream_outcome import Outcome
from .stream_sample import MAX_STACK, SAMPLE_CALLCHAIN, SAMPLE_IP, SAMPLE_PERIOD, \
    SAMPLE_TID, SAMPLE_TIME, sample_record

FXT_REF = "fuchsia docs/reference/tracing/trace-format.md (record framing, metadata, init, " \
          "string, thread, kernel object and profiler records)"
FUCHSIA_REF = "fuchsia src/starnix/kernel/perf: FXT unit test feeding magic and two " \
              "backtraces with one koid pair mapped; sdk/lib/fxt serializer"
MARKUP_REF = "llvm docs/SymbolizerMarkupFormat.rst (bt, reset, module, mmap; %p is 0x and " \
             "at most 16 hex digits); llvm/test/DebugInfo/symbolize-filter-markup-*.test"

NOTES = {
    "Framing": "Record framing: header size in words, magic record first, records skipped by size.",
    "Tables": "String or thread table entries referenced by index.",
    "InlineRefs": "Strings or koids written inline in the record.",
    "KoidMap": "Fuchsia koids mapped to Linux pid/tid; unmapped samples are dropped and counted.",
    "Timebase": "Init record ticks-per-second conversion of backtrace timestamps to ns.",
    "Skipped": "Records or elements the pipeline does not use, passed over.",
    "Detect": "Decodes the same with the format named or detected from the first 8 bytes "
              "(the FXT magic word or not).",
    "Malformed": "The stream is malformed: decoding stops with error {code, offset}; samples "
                 "decoded before the bad record or line are still delivered.",
    "Truncated": "The stream ends inside a record or line.",
    "KeptBeforeError": "Samples precede the malformed part and must still be delivered.",
    "LongStream": "Long stream: consumers may feed it at a few chunk sizes instead of all.",
    "WorkedExample": "A worked example printed in the source.",
}

# Successive read sizes for a consumer that feeds one schedule (the rest comes last).
CHUNKS = [1, 2, 5, 8, 13]


def emit(group: document.Group, comment: str, flags: Iterable[str], out: Outcome, fmt: str,
         sample_type: int, period: int, result: str | None = None) -> None:
    """One test in the common streamTest shape (vectors/schema/common.schema.json)."""
    if result is None:
        result = "invalid" if out.error else "valid"
    flag_list = list(flags)
    if out.error and "Malformed" not in flag_list:
        flag_list.append("Malformed")
    if out.error and out.samples and "KeptBeforeError" not in flag_list:
        flag_list.append("KeptBeforeError")
    if len(out.data) > 4096 and "LongStream" not in flag_list:
        flag_list.append("LongStream")
    ring = b"".join(sample_record(sample_type, s, period) for s in out.samples)
    if fmt == "markup":
        stream = {"text": bytes(out.data).decode("ascii")}
    else:
        stream = {"hex": document.hex_bytes(out.data)}
    test = {
        "stream": stream,
        "chunk": CHUNKS,
        "koids": [{"koid": k, "linux_id": v} for k, v in sorted(out.koids.items())],
        "sample_type": sample_type,
        "sample_period": period,
        "expected": {
            "samples": [{"pid": s["pid"], "tid": s["tid"], "time": s["time"],
                         "ips": [document.hex_u64(ip) for ip in s["ips"]]} for s in out.samples],
            "ring": document.hex_bytes(ring),
            "error": out.error,
        },
        "x_dropped_unmapped": out.dropped,
        "x_warnings": out.warnings,
        "x_max_stack": MAX_STACK,
    }
    group.add(comment, flag_list, result, **test)


ST_FULL = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD | SAMPLE_CALLCHAIN
ST_FUCHSIA = SAMPLE_IP | SAMPLE_TID
ST_MARKUP = SAMPLE_IP | SAMPLE_TID | SAMPLE_CALLCHAIN
PERIOD = 1000000
M = {1001: 42, 1002: 43, 2001: 50, 2002: 51, 2003: 52}
