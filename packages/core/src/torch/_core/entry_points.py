"""A small reader of installed entry points.

``importlib.metadata`` costs ~18 ms to import and more to scan; ``import torch`` only needs one
group. This reads ``entry_points.txt`` of the ``*.dist-info`` / ``*.egg-info`` folders on
``sys.path`` directly, in ``sys.path`` order, first distribution of a name wins (the rule
``importlib.metadata`` follows).
"""

from __future__ import annotations

import os
import sys
from operator import itemgetter


class EntryPoint(tuple):
    """One entry point: ``(name, value, group, distribution, version)``, also by attribute
    (a ``typing.NamedTuple`` would import ``typing`` into every ``import torch``)."""

    __slots__ = ()
    _FIELDS = ("name", "value", "group", "distribution", "version")

    def __new__(cls, name: str, value: str, group: str, distribution: str,
                version: str) -> EntryPoint:
        return tuple.__new__(cls, (name, value, group, distribution, version))

    name = property(itemgetter(0))
    value = property(itemgetter(1))
    group = property(itemgetter(2))
    distribution = property(itemgetter(3))
    version = property(itemgetter(4))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={part!r}" for name, part in zip(self._FIELDS, self))
        return f"EntryPoint({fields})"


def _split_dist_dir(dirname: str) -> tuple[str, str]:
    stem = dirname.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    return name.replace("_", "-").lower(), version.split("-")[0]


def _parse(text: str, group: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[" and line[-1] == "]":
            current = line[1:-1].strip()
            continue
        if current == group and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def find(group: str, path: list[str] | None = None) -> list[EntryPoint]:
    """Every entry point of ``group`` installed on ``path`` (default ``sys.path``)."""
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in path if path is not None else sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for dirname in sorted(names):
            if not dirname.endswith((".dist-info", ".egg-info")):
                continue
            dist, version = _split_dist_dir(dirname)
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(entry or ".", dirname, "entry_points.txt"),
                          encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            for name, value in _parse(text, group):
                found.append(EntryPoint(name, value, group, dist, version))
    return found
