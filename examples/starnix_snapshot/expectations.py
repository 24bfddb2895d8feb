#!/usr/bin/python3
"""Rewrites conformance/expectations/starnix_snapshot.txt from a results file of the plugin
runner, giving each failing case the Fuchsia bug of the quirk that explains it.

    bazel build //conformance/adapters/plugin:pecs-plugin //examples/starnix_snapshot:all
    bazel-bin/conformance/adapters/plugin/pecs-plugin --isolate --quiet \\
        --plugin bazel-bin/examples/starnix_snapshot/libstarnix_snapshot.so --json /tmp/s.json
    /usr/bin/python3 examples/starnix_snapshot/expectations.py /tmp/s.json \\
        > conformance/expectations/starnix_snapshot.txt

A failure no rule explains is printed on stderr and the exit status is 1: decide whether
it is one of the snapshot's documented quirks (add a rule) or a bug in the example or the
case (fix it). Never list a failure without knowing why it fails.
"""
import json
import re
import sys

QUIRKS = {
    "ioctl": "fxbug.dev/404941053: nine of the twelve ioctls (REFRESH, PERIOD, SET_OUTPUT, "
             "SET_FILTER, ID, SET_BPF, PAUSE_OUTPUT, MODIFY_ATTRIBUTES, QUERY_BPF) return ENOSYS",
    "group": "fxbug.dev/402238049: PERF_FORMAT_GROUP returns ENOSYS at open",
    "flaggroup": "fxbug.dev/405463320: PERF_IOC_FLAG_GROUP is ignored, so siblings are not "
                 "enabled, disabled or reset with their leader",
    "value": "fxbug.dev/402938671: the count is a stub that rises by one per read, not the "
             "clock's nanoseconds",
    "lost": "fxbug.dev/402260383: PERF_FORMAT_LOST is accepted but adds no bytes to read()",
    "errors": "fxbug.dev/402453955: open() checks almost nothing (attr.size, flags, reserved "
              "bits, cpu, configs, group rules)",
    "pid": "fxbug.dev/409621963: any pid other than -1 and 0 returns ENOSYS",
    "write": "fxbug.dev/394960158: write() returns ENOSYS",
    "mmap": "fxbug.dev/416323134: mmap() accepts any non-zero length, flags, offset and "
            "protection; no ring rules",
    "mmap2": "fxbug.dev/460245383: a second mmap() of another size is not refused",
    "meta": "fxbug.dev/398914921: the metadata page is hard-coded (version 1, compat 2, index 3, "
            "offset 19337, capabilities 30, size 0) and never updated",
    "misc": "fxbug.dev/432501467: samples are marked KERNEL (misc 1) whatever the context; "
            "TIME and other fields are not written",
    "koids": "fxbug.dev/398914921: profiler koids become pid and tid unmapped, and samples of "
             "unmapped tasks are kept",
    "times": "starnix_perf_mod.rs read(), in the read_format stub of fxbug.dev/402938671: "
             "time_enabled and time_running are both monotonic wall time while the event is "
             "enabled, not the task's run time, and a member's do not wait for its leader",
    "leaderid": "starnix_perf_mod.rs PerfState.format_id_lookup_table and perf_event_open's "
                "group_fd branch: a member's samples carry its leader's format id in "
                "PERF_SAMPLE_ID and PERF_SAMPLE_IDENTIFIER (no Fuchsia bug tracks it)",
    "vfs": "starnix_perf_mod.rs ioctl(), as snap_ioctl reproduces it without Starnix's VFS "
           "in front: every request it does not know is ENOTTY, FIOCLEX, FIONBIO, FIOASYNC "
           "and FIGETBSZ included, which Linux answers in do_vfs_ioctl for any fd before "
           "perf_ioctl (no Fuchsia bug tracks it)",
    "text": "fxbug.dev/437171287: the text parser works on each socket read alone: one sample "
            "per read at most, and a line split across reads is lost",
}

# (quirk, pattern on the case id, pattern on the message[, condition]): the first match
# wins, so the more specific rules come first. A condition (docs/implementing.md,
# "Expectations files") marks a failure that only a run with that host fact can show.
RULES = [
    # An event on another process's task: the snapshot has none.
    ("pid", r"(Open|Read)\.PidTask\.|Exec\.(EnableOnExec|RemoveOnExec)\.", r"ENOSYS"),
    # Only a caller that may count the kernel opens the kernel-inclusive switch counter,
    # whose stub value (1) is then short of the waits.
    ("value", r"Read\.Count\.SwitchesUserOnlyZero", r"kernel-inclusive counter saw",
     "privileged"),
    ("write", r"^Required\.Read\.Write\.", None),
    ("text", r"Profiler\.Markup\.(LineSplit|OneSamplePerBlock)", None),
    ("koids", r"KoidMap\.|FuchsiaUnitTestExample", None),
    ("leaderid", r"^Required\.Profiler\.Group\.MemberSamplesCarryMemberId$",
     r"IDENTIFIER (\d+), ID \1; the member's id is \d+, the leader's \1$"),
    ("misc", r"^Required\.Profiler\.", r"got 0x01, want 0x02|ring holds \d+ bytes, want"),
    ("ioctl", None, r"pecs_event_id|PECS_IOC_ID"),
    ("ioctl", r"Ioctl\.(Id|Period|Refresh|SetBpf|SetFilter|QueryBpf|ModifyAttributes|"
              r"SetOutput|PauseOutput)\.", None),
    ("group", r"^Required\.Group\.|ReadSizeOver16KiB|ReadSizeAfterClock|AnySoftwareEventJoins|"
              r"Layout\.Group\.|GroupShort|Read\.Group\.",
     r"ENOSYS"),
    ("flaggroup", r"^Required\.Ioctl\.Group\.|ArgIsU32Bit0Only", None),
    ("value", r"Read\.(Count|Disable|Reset)\.|Ioctl\.Reset\.", None),
    ("value", None, r"counted nothing"),
    ("value", r"Group\.Schedule\.MemberRunsOnlyWithItsLeader", r": value [1-9]"),
    ("value", r"Ioctl\.Encoding\.UpperHalfOfRequestIgnored", r"counted \d+ ns (of|in)"),
    # Only a caller that may count a CPU opens the cpu-wide clock.
    ("value", r"Read\.Times\.CpuWideTimesFollowTheWallClock", r"counted \d+ ns over",
     "privileged"),
    ("times", r"Read\.Times\.TaskEventTimesFollowTheTask", r"time_enabled \d+ ns (for|counted)"),
    # Running is wall time while enabled, so an event bound to a CPU its task is not on runs.
    ("times", r"Read\.Times\.TaskEventOnAnotherCpuNeverRuns", r"bound to CPU \d+: never running"),
    ("vfs", r"^Required\.Ioctl\.Vfs\.GenericFileIoctlsAnswered$", r"ENOTTY"),
    ("lost", r"Read\.Buffer\.ShortIsEnospc", None),
    ("pid", r"Open\.PidCpu\.(ExitedPid|NegativePid|ThisThread)|LeaderTaskExited", None),
    ("pid", r"Read\.Times\.FinishedThreadFrozen", r"ENOSYS"),
    ("mmap2", r"Mmap\.Shared\.OtherSize", None),
    ("meta", r"^Required\.Mmap\.Page\.", None),
    ("mmap", r"^Required\.Mmap\.", None),
    ("errors", r"^Required\.Open\.", None),
    # The breakpoint PMU's rules: the snapshot opens any bp_type, bp_len and address.
    ("errors", r"^Required\.Breakpoint\.Rules\.", None),
]

HEADER = """\
# Known failures of examples/starnix_snapshot, the divergent example plugin: a Starnix
# perf_event snapshot's documented behaviour. Each line names the Fuchsia bug that the
# snapshot's own track_stub ties to the gap or, where no bug tracks it, the seed code
# (starnix_perf_mod.rs) that makes it. A case listed here that passes (XPASS), a line
# that matches no case (stale) and a failing case not listed here each fail the run.
# Written by examples/starnix_snapshot/expectations.py from a run of the plugin runner."""


def quirk_of(result):
    """The quirk that explains a failure and the condition its line needs, or None."""
    for rule in RULES:
        quirk, id_pat, msg_pat = rule[:3]
        if id_pat and not re.search(id_pat, result["id"]):
            continue
        if msg_pat and not re.search(msg_pat, result["message"]):
            continue
        return quirk, (rule[3] if len(rule) > 3 else None)
    return None


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        results = json.load(f)["results"]
    listed, unexplained = {}, []
    for r in results:
        if r["raw_status"] not in ("FAIL", "BROKEN", "CRASH"):
            continue
        found = quirk_of(r)
        if found is None:
            unexplained.append(r)
        else:
            quirk, cond = found
            listed.setdefault(quirk, []).append(r["id"] + (" [%s]" % cond if cond else ""))
    lines = [HEADER]
    for quirk, reason in QUIRKS.items():
        if quirk in listed:
            lines.append("")
            lines += ["%s  # %s" % (i, reason) for i in sorted(listed[quirk])]
    print("\n".join(lines))
    for r in unexplained:
        sys.stderr.write("unexplained %s %s: %s\n" % (r["raw_status"], r["id"], r["message"]))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
