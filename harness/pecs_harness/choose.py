"""Which implementations a command runs, under which labels, gated by which files."""
import argparse
import dataclasses
import os

from . import impls
from . import results as results_mod
from .execute import Progress

DEFAULT_IMPLS = ["ref", "syscall", "syscall-unprivileged", "starnix_snapshot"]


def pairs(values: list[str] | None, what: str) -> dict[str, str]:
    """LABEL=PATH options as a dict; SpecError (a usage error, status 2) on a malformed one."""
    out = {}
    for v in values or []:
        k, eq, path = v.partition("=")
        if not eq or not k:
            raise impls.SpecError("%s wants LABEL=PATH, got '%s'" % (what, v))
        out[k] = path
    return out


class Labels:
    """Labels given out so far: a second implementation of one name gets NAME-2."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def unique(self, label: str) -> str:
        base, n = label, 2
        while label in self.taken:
            label = "%s-%d" % (base, n)
            n += 1
        self.taken.add(label)
        return label

    def reserve(self, label: str) -> None:
        self.taken.add(label)


def expectations_for(args: argparse.Namespace, label: str) -> str | None:
    given = pairs(args.expectations, "--expectations")
    if label in given:
        p = given[label]
        return os.path.abspath(p) if p else None
    return impls.default_expectations(args.root, label)


def explicitly_none(args: argparse.Namespace, label: str) -> bool:
    return pairs(args.expectations, "--expectations").get(label, None) == ""


def choose(args: argparse.Namespace, progress: Progress) -> list[impls.Impl]:
    """The implementations named by --impl (or the defaults). A default that cannot run
    here is skipped with a note; one named explicitly is a SpecError."""
    loc = impls.Locator(args.root, args.bin, pairs(args.runner, "--runner"))
    chosen = []
    explicit = bool(args.impl)
    for spec in args.impl or DEFAULT_IMPLS:
        if spec == "syscall-unprivileged" and not explicit and os.geteuid() != 0:
            progress.say("pecs: not root: skipping syscall-unprivileged (the syscall run is "
                         "already unprivileged)")
            continue
        try:
            chosen.append(impls.parse(spec, loc))
        except impls.SpecError as e:
            if explicit:
                raise
            progress.say("pecs: skipping %s: %s" % (spec, e))
    if not chosen:
        raise impls.SpecError("nothing to run")
    return chosen


def labelled(args: argparse.Namespace, impl: impls.Impl, labels: Labels) -> impls.Impl:
    """impl under a label of its own, with the expectations file of that label."""
    label = labels.unique(impl.label)
    return dataclasses.replace(impl, label=label, expectations=expectations_for(args, label))


def imported(args: argparse.Namespace, impl: impls.Impl, labels: Labels) -> results_mod.Run:
    """Results written elsewhere. Their expectations: --expectations, else
    conformance/expectations/<label>.txt, else the file the runner used if it is here, else
    the statuses as the runner gated them."""
    try:
        parts = [results_mod.load(p) for p in impl.imports]
        data = results_mod.merge_shards(parts, ", ".join(impl.imports))
    except results_mod.ResultsError as e:
        return results_mod.Run(labels.unique(impl.label or "imported"), "import", impl.source,
                               None, str(e))
    # The label is the implementation's: the one given, else the results file's name. The
    # runner's impl is the adapter's ("syscall" for the static binary run inside qemu),
    # and taking it would gate another system with Linux's own file.
    label = labels.unique(impl.label or import_label(impl.imports) or data["impl"])
    want: str | results_mod.AsWritten | None = expectations_for(args, label)
    if want is None:
        used = data.get("expectations")
        if used and os.path.isfile(used):
            want = used
        elif used and not explicitly_none(args, label):
            want = results_mod.AS_WRITTEN
    return results_mod.Run(label, "import", impl.source, data, want_expectations=want)


def import_label(paths: list[str]) -> str:
    """"qemu" for qemu.json or pecs-qemu.json (a shard's "-shardN" suffix is kept)."""
    base = os.path.basename(paths[0]) if paths else ""
    if base.endswith(".json"):
        base = base[:-5]
    if base.startswith("pecs-"):
        base = base[5:]
    return base
