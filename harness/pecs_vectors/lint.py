"""Checks every vector file under vectors/ and returns a list of problems.

What is checked, per file: the JSON Schema its "schema" key names; tcIds unique; each
group's source from the closed list; flags defined in notes; numberOfTests right; hex
lowercase; and that no tcId published in the last commit (git HEAD) has changed meaning.
"""

import json
import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

from . import document

SCHEMA_DIR = "schema"
SCHEMA_BASE = "https://pecs.invalid/vectors/schema/"

_HEXISH = re.compile(r"^(0x)?[0-9a-fA-F]+$")
_HEX_KEYS = ("expected", "ring", "hex", "request", "addr", "ips")


def vector_files(vectors_dir: str) -> list[str]:
    """Relative paths of every vector JSON file (the schema folder excluded), sorted."""
    out: list[str] = []
    vectors_dir = os.path.normpath(vectors_dir)
    for root, dirs, files in os.walk(vectors_dir):
        dirs[:] = sorted(d for d in dirs if d != SCHEMA_DIR or root != vectors_dir)
        for name in files:
            if name.endswith(".json"):
                out.append(os.path.relpath(os.path.join(root, name), vectors_dir))
    return sorted(out)


def _load_schemas(vectors_dir: str) -> dict[str, dict[str, Any]]:
    store: dict[str, dict[str, Any]] = {}
    schema_dir = os.path.join(vectors_dir, SCHEMA_DIR)
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
                store[name] = json.load(f)
    return store


def _validator(store: dict[str, dict[str, Any]], name: str) -> Any:
    import jsonschema  # Debian's python3-jsonschema; only lint needs it

    by_id = {s.get("$id", SCHEMA_BASE + n): s for n, s in store.items()}
    schema = store[name]
    cls = jsonschema.validators.validator_for(schema)
    resolver = jsonschema.RefResolver(base_uri=schema.get("$id", SCHEMA_BASE + name),
                                      referrer=schema, store=by_id)
    return cls(schema, resolver=resolver)


def _tests(doc: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for group in doc.get("testGroups", []):
        for test in group.get("tests", []):
            yield group, test


def _walk_hex(value: object, key: str | None, path: str, problems: list[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk_hex(v, k, path, problems)
    elif isinstance(value, list):
        for v in value:
            _walk_hex(v, key, path, problems)
    elif isinstance(value, str) and key in _HEX_KEYS and _HEXISH.match(value):
        if value != value.lower():
            problems.append("%s: hex must be lowercase: %s = %r" % (path, key, value[:40]))


def committed_text(repo_root: str, rel_path: str, rev: str = "HEAD") -> str | None:
    """The file's text at rev, or None when git does not know it there."""
    r = subprocess.run(["git", "-C", repo_root, "show", "%s:%s" % (rev, rel_path)],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    return r.stdout.decode("utf-8")


def _repo_root(path: str) -> str | None:
    r = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return r.stdout.decode().strip() if r.returncode == 0 else None


def check_meaning(doc: dict[str, Any], old_doc: dict[str, Any], path: str) -> list[str]:
    """Problems where a tcId from old_doc now stands for a different test (removal included)."""
    problems: list[str] = []
    now = {t.get("tcId"): (g, t) for g, t in _tests(doc)}
    for old_group, old_test in _tests(old_doc):
        tc = old_test.get("tcId")
        if tc not in now:
            problems.append("%s: tcId %s was published and is gone; keep it (published ids are "
                            "never removed or reused)" % (path, tc))
            continue
        group, test = now[tc]
        if test != old_test or group.get("source") != old_group.get("source") or \
                group.get("type") != old_group.get("type"):
            problems.append("%s: tcId %s changed meaning since the last commit; a published vector "
                            "never changes: restore it and add a new tcId instead" % (path, tc))
    return problems


def lint_file(vectors_dir: str, rel_path: str, store: dict[str, dict[str, Any]],
              repo_root: str | None = None, rev: str = "HEAD") -> list[str]:
    path = "vectors/" + rel_path
    try:
        with open(os.path.join(vectors_dir, rel_path), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return ["%s: cannot read JSON: %s" % (path, e)]
    problems: list[str] = []
    if not isinstance(doc, dict):
        return ["%s: top level must be an object" % path]

    schema_name = doc.get("schema")
    if schema_name not in store:
        problems.append("%s: unknown schema %r (expected a file in vectors/schema/)" % (path, schema_name))
    else:
        for err in sorted(_validator(store, schema_name).iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in err.absolute_path)
            problems.append("%s: schema: at /%s: %s" % (path, where, err.message[:300]))

    seen: set[object] = set()
    count = 0
    notes: dict[str, Any] = doc["notes"] if isinstance(doc.get("notes"), dict) else {}
    for group in doc.get("testGroups", []) if isinstance(doc.get("testGroups"), list) else []:
        source = group.get("source", {}) if isinstance(group, dict) else {}
        name = source.get("name") if isinstance(source, dict) else None
        if name not in document.SOURCES:
            problems.append("%s: group source %r is not in the closed list %s" %
                            (path, name, ", ".join(document.SOURCES)))
        for test in group.get("tests", []) if isinstance(group, dict) else []:
            count += 1
            tc = test.get("tcId") if isinstance(test, dict) else None
            if tc in seen:
                problems.append("%s: duplicate tcId %s" % (path, tc))
            seen.add(tc)
            for flag in test.get("flags", []) if isinstance(test, dict) else []:
                if flag not in notes:
                    problems.append("%s: tcId %s: flag %r has no entry in notes" % (path, tc, flag))
    if doc.get("numberOfTests") != count:
        problems.append("%s: numberOfTests is %r but the file has %d tests" %
                        (path, doc.get("numberOfTests"), count))
    _walk_hex(doc, None, path, problems)

    if repo_root:
        rel_repo = os.path.relpath(os.path.join(vectors_dir, rel_path), repo_root)
        old = committed_text(repo_root, rel_repo, rev)
        if old is not None:
            try:
                old_doc = json.loads(old)
            except ValueError:
                old_doc = None
            if isinstance(old_doc, dict):
                problems += check_meaning(doc, old_doc, path)
    return problems


def _checkout_of(vectors_dir: str, files: list[str]) -> str:
    """The vectors folder of the git checkout vectors_dir comes from. Bazel's runfiles are
    symlinks into the checkout, so the files' real paths lead back to it."""
    for rel in files:
        real = os.path.realpath(os.path.join(vectors_dir, rel))
        if real.endswith(os.sep + rel):
            return real[:-len(rel) - 1]
    return vectors_dir


def lint(vectors_dir: str, history: bool = True, rev: str = "HEAD") -> list[str]:
    """Every problem found in vectors_dir; empty means clean. With history, tests are
    compared with the same files at git revision rev, and a history that cannot be read
    is a problem (pass history=False to lint a copy outside git)."""
    store = _load_schemas(vectors_dir)
    files = vector_files(vectors_dir)
    problems: list[str] = []
    if not files:
        problems.append("no vector files under %s" % vectors_dir)
    repo_root = None
    if history:
        source_dir = _checkout_of(vectors_dir, files)
        repo_root = _repo_root(source_dir)
        if not repo_root:
            problems.append("%s is not in a git checkout: cannot check that published tcIds kept "
                            "their meaning (lint --no-history skips that check)" % source_dir)
        elif subprocess.run(["git", "-C", repo_root, "rev-parse", "--verify", "-q", rev + "^{commit}"],
                            stdout=subprocess.DEVNULL).returncode != 0:
            problems.append("git revision %r not found: cannot check that published tcIds kept "
                            "their meaning" % rev)
            repo_root = None
        else:
            vectors_dir = source_dir
    for rel in files:
        problems += lint_file(vectors_dir, rel, store, repo_root, rev)
    return problems
