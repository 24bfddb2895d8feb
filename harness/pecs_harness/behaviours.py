"""The behaviours catalogue, docs/behaviours.md: Markdown tables whose first column is the
behaviour id (columns: id | behaviour | source | cases | vectors | ref). The one reader of
it: the report's coverage view and harness/tools/behaviours.py (check, write) both use it."""
import os
from collections.abc import Iterator

Row = dict[str, str]  # a catalogue row: its cells by column name


def cells(line: str) -> list[str]:
    """Cells of a Markdown table row; an escaped pipe (\\|) stays inside its cell."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\x00", "\\|") for c in s.replace("\\|", "\x00").split("|")]


def _is_separator(line: str) -> bool:
    cs = cells(line)
    return bool(cs) and all(c and set(c) <= set("-: ") and "-" in c for c in cs)


def _clean_id(cell: str) -> str:
    return cell.strip().strip("`*").strip()


def table_rows(lines: list[str]) -> Iterator[tuple[int, list[str], list[str]]]:
    """(index in lines, header, cells) of every row of every table whose first header cell
    is 'id'; other tables are skipped."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            header = [h.lower() for h in cells(line)]
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                if header and header[0] == "id":
                    yield i, header, cells(lines[i])
                i += 1
            continue
        i += 1


def parse(text: str) -> list[Row]:
    """Returns [{id, behaviour, source, cases, vectors, ref}] in file order."""
    rows: list[Row] = []
    for _, header, cs in table_rows(text.splitlines()):
        row = {h: (cs[k] if k < len(cs) else "") for k, h in enumerate(header)}
        row["id"] = _clean_id(row["id"])
        if row["id"]:
            rows.append(row)
    return rows


def load(path: str | None) -> list[Row] | None:
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return parse(f.read())


def has_vectors(row: Row) -> bool:
    v = row.get("vectors", "").strip()
    return v not in ("", "-", "—", "none", "n/a")
