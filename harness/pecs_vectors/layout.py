"""Layouts that more than one area needs, computed from the field tables."""

from collections.abc import Sequence
from typing import Any

from . import uapi

# (name, offset, size) of one field
Field = tuple[str, int, int]


def read_format_fields(read_format: int, nr_members: int = 1) -> list[Field]:
    """[(name, offset, size)] of what read() returns for this read_format.

    Follows the read_format comment in the UAPI header: a single event gives value then
    the optional words in bit order; a GROUP read gives nr, the two times, then one
    {value, [id], [lost]} block per member, leader first.
    """
    fields: list[Field] = []

    def put(name: str) -> None:
        fields.append((name, 8 * len(fields), uapi.U64))

    if read_format & uapi.FORMAT_GROUP:
        put("nr")
    else:
        put("value")
    if read_format & uapi.FORMAT_TOTAL_TIME_ENABLED:
        put("time_enabled")
    if read_format & uapi.FORMAT_TOTAL_TIME_RUNNING:
        put("time_running")
    if read_format & uapi.FORMAT_GROUP:
        for i in range(nr_members):
            put("member[%d].value" % i)
            if read_format & uapi.FORMAT_ID:
                put("member[%d].id" % i)
            if read_format & uapi.FORMAT_LOST:
                put("member[%d].lost" % i)
    else:
        if read_format & uapi.FORMAT_ID:
            put("id")
        if read_format & uapi.FORMAT_LOST:
            put("lost")
    return fields


def read_size_formula(read_format: int, nr_members: int = 1) -> int:
    """The man page's size arithmetic, kept separate from the field walk above."""
    te_tr = bin(read_format & (uapi.FORMAT_TOTAL_TIME_ENABLED | uapi.FORMAT_TOTAL_TIME_RUNNING)).count("1")
    per_member = 1 + bin(read_format & (uapi.FORMAT_ID | uapi.FORMAT_LOST)).count("1")
    if read_format & uapi.FORMAT_GROUP:
        return 8 * (1 + te_tr) + 8 * nr_members * per_member
    return 8 * (te_tr + per_member)


def natural_layout(table: Sequence[tuple[Any, ...]]) -> tuple[list[Field], int]:
    """([(name, offset, size)], total) of a C struct whose members are naturally aligned
    scalars (byte arrays align to 1); entries of table start with (name, size)."""
    out: list[Field] = []
    offset = 0
    for entry in table:
        name, size = entry[0], entry[1]
        align = size if size in (1, 2, 4, 8) else 1
        offset = (offset + align - 1) // align * align
        out.append((name, offset, size))
        offset += size
    return out, offset
