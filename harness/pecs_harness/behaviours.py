"""The behaviours catalogue, docs/behaviours.md: a Markdown table whose first column is the
behaviour id (columns: id | behaviour | source | cases | vectors | ref)."""
import os

Row = dict[str, str]  # a catalogue row: its cells by column name


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(c and set(c) <= set("-: ") and "-" in c for c in cells)


def _clean_id(cell: str) -> str:
    return cell.strip().strip("`*").strip()


def parse(text: str) -> list[Row]:
    """Returns [{id, behaviour, source, cases, vectors, ref}] in file order. Rows of every
    table whose first header cell is 'id' count; other tables are ignored."""
    rows: list[Row] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            header = [h.lower() for h in _cells(line)]
            i += 2
            if not header or header[0] != "id":
                continue
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = _cells(lines[i])
                row = {h: (cells[k] if k < len(cells) else "") for k, h in enumerate(header)}
                row["id"] = _clean_id(row["id"])
                if row["id"]:
                    rows.append(row)
                i += 1
            continue
        i += 1
    return rows


def load(path: str | None) -> list[Row] | None:
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return parse(f.read())


def has_vectors(row: Row) -> bool:
    v = row.get("vectors", "").strip()
    return v not in ("", "-", "—", "none", "n/a")
