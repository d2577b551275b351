"""Compare what ``layout_collect.py`` recorded under Plait and under PyTorch: the op database
on the meta device and under fake tensors.

A sample matches when both libraries return results of the same structure whose tensors agree
in dtype, shape, strides, storage offset and device (and whose non-tensor leaves are equal), or
when both raise an exception of the same built-in category. Strides are compared where they
matter (dimensions longer than one; none for an empty tensor), as PyTorch's own meta tests do.
Where PyTorch's meta/fake run cannot give the answer (it raises ``NotImplementedError`` or a
fake-tensor exception such as ``DynamicOutputShapeException``: data-dependent ops), any Plait
exception matches; where it raises for lack of data or gives a layout that differs from its own
CPU run, a Plait result with the layout of PyTorch's CPU run matches too. Every mismatch gets a
category (what differs), so the report groups them by cause.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

SECTIONS = {"meta": "meta device", "fake": "fake tensors"}
# PyTorch's ways of saying "this op cannot run without data" (or has no such kernel): the
# exception class names its meta and fake-tensor paths raise.
UNSUPPORTED = {"NotImplementedError", "DynamicOutputShapeException",
               "DataDependentOutputException", "UnsupportedOperatorException",
               "UnsupportedFakeTensorException", "GuardOnDataDependentSymNode"}
TENSOR_FIELDS = ("dtype", "shape", "stride", "offset", "device")
MAX_DETAILS = 40
MAX_OPS = 30


def _unsupported(outcome: dict[str, Any]) -> bool:
    return outcome["status"] == "raised" and (
        outcome["type"] in UNSUPPORTED or outcome["category"] == "NotImplementedError")


def compare_results(mine: Any, ref: Any, random: bool, where: str = "result"
                    ) -> tuple[str, str] | None:
    """(category, detail) of the first difference between two encoded results, or None."""
    if mine["kind"] != ref["kind"]:
        return "result kind", (f"{where}: {mine.get('type', mine['kind'])} != "
                               f"{ref.get('type', ref['kind'])}")
    kind = ref["kind"]
    if kind in ("tuple", "list", "dict"):
        a, b = mine["items"], ref["items"]
        if (sorted(a) if kind == "dict" else len(a)) != (sorted(b) if kind == "dict" else len(b)):
            return "result structure", f"{where}: {len(a)} items != {len(b)}"
        keys = b if kind == "dict" else range(len(b))
        for key in keys:
            why = compare_results(a[key], b[key], random, f"{where}[{key!r}]")
            if why:
                return why
        return None
    if kind == "scalar":
        if mine["type"] != ref["type"]:
            return "scalar type", f"{where}: a {mine['type']} != a {ref['type']}"
        if not random and mine["value"] != ref["value"] and mine["value"] == mine["value"]:
            return "scalar value", f"{where}: {mine['value']!r} != {ref['value']!r}"
        return None
    if kind == "other":
        if mine["type"] != ref["type"] or (not random and mine["repr"] != ref["repr"]):
            return "result kind", (f"{where}: {mine['type']} {mine['repr']} != "
                                   f"{ref['type']} {ref['repr']}")
        return None
    for field in TENSOR_FIELDS:
        a, b = _significant(mine, field), _significant(ref, field)
        if a != b:
            return field, (f"{where}: {field} {mine[field]} != {ref[field]} (Plait != PyTorch), "
                           f"shape {ref['shape']}")
    return None


def _significant(tensor: dict[str, Any], field: str) -> Any:
    """What of a tensor's ``field`` matters: strides of dimensions longer than one, and no
    strides or offset at all for an empty tensor (as PyTorch's own meta tests compare)."""
    empty = 0 in tensor["shape"]
    if field == "stride":
        return () if empty else tuple(
            st for size, st in zip(tensor["shape"], tensor["stride"]) if size > 1)
    if field == "offset" and empty:
        return 0
    return tensor[field]


def _on(encoded: Any, device: str) -> Any:
    """An encoded result with every tensor's device set to ``device``."""
    if not isinstance(encoded, dict):
        return encoded
    if encoded["kind"] == "tensor":
        return {**encoded, "device": device}
    if "items" in encoded:
        items = encoded["items"]
        return {**encoded, "items": ({k: _on(v, device) for k, v in items.items()}
                                     if isinstance(items, dict) else
                                     [_on(v, device) for v in items])}
    return encoded


def _real_note(mine: dict[str, Any], category: str) -> str:
    """Whether Plait's real (CPU) run gives the same layout as its meta/fake run: tells a
    meta-kernel slip from a layout rule the real kernel shares."""
    real, got = mine.get("real"), mine.get("result")
    if category not in TENSOR_FIELDS[:4] or real.get("kind") == "raised" or got is None:
        return ""
    differs = compare_results(_on(got, "cpu"), _on(real, "cpu"), True)
    if differs is None:
        return " [Plait's CPU run gives the same]"
    return f" [Plait's CPU run differs: {differs[1].replace(' (Plait != PyTorch)', '')}]"


def _matches_real(mine: dict[str, Any], ref: dict[str, Any], device: str | None,
                  random: bool) -> bool:
    """Whether Plait's result has the layout of PyTorch's real (CPU) computation."""
    real = ref.get("real")
    if not isinstance(real, dict) or real["kind"] == "raised":
        return False
    return compare_results(mine["result"], _on(real, device) if device else real,
                           random) is None


def compare_outcome(mine: dict[str, Any] | None, ref: dict[str, Any] | None, random: bool,
                    device: str | None = None) -> tuple[str, str] | None:
    """(category, detail) of a mismatch between two outcomes, or None when they match.

    Plait's result also matches when it has the layout of PyTorch's real computation (set to
    ``device``) where PyTorch's meta/fake run cannot give it: PyTorch's run raised for lack of
    data, or its layout differs from PyTorch's own CPU run."""
    if mine is None or ref is None:
        return "missing sample", f"no outcome under {'Plait' if mine is None else 'PyTorch'}"
    if ref["status"] == "raised" and _unsupported(ref) and mine["status"] != "ok":
        return None
    if mine["status"] == "raised" and ref["real"].get("category", "") == mine["category"]:
        return None  # PyTorch's real computation raises alike (its meta kernel is looser)
    if mine["status"] == "raised" and ref["status"] == "raised":
        if mine["category"] == ref["category"]:
            return None
        return (f"both raised, {mine['category']} != {ref['category']}",
                f"Plait {mine['type']}: {mine['message']} / PyTorch {ref['type']}: "
                f"{ref['message']}")
    if mine["status"] != "ok":
        return (f"Plait raised {mine['type']}",
                f"Plait {mine['type']}: {mine['message']} (PyTorch returned a result)")
    if ref["status"] != "ok":
        if _matches_real(mine, ref, device, random):
            return None
        what = ("PyTorch has no meta/fake kernel (data-dependent), Plait returned a result"
                if _unsupported(ref) else f"PyTorch raised {ref['category']}, Plait returned")
        real = ref["real"]
        against = ("raises on CPU too" if real["kind"] == "raised" else
                   "differs from PyTorch's CPU run: " + compare_results(
                       mine["result"], _on(real, device) if device else real, random)[1])
        return what, f"Plait's result {against} / PyTorch {ref['type']}: {ref['message']}"
    why = compare_results(mine["result"], ref["result"], random)
    if why is None or _matches_real(mine, ref, device, random):
        return None
    return why[0], why[1] + _real_note(mine, why[0])


def compare(mine: dict[Any, Any], ref: dict[Any, Any], rows: dict[str, Any], section: str
            ) -> tuple[dict[str, list[int]], list[tuple[str, str, str, str, str]]]:
    """Per op [samples, passed, failed], and the mismatches (op, dtype, sample, category,
    detail) of one section, in op-database order."""
    device = "meta" if section == "meta" else None  # fake tensors keep the real device
    table: dict[str, list[int]] = {}
    failures = []
    order = {name: i for i, name in enumerate(rows)}
    for key in sorted(set(mine) | set(ref), key=lambda k: (order.get(k[0], len(order)), k)):
        op, dtype, _ = key
        row = rows.get(op)
        why = compare_outcome(mine.get(key), ref.get(key), bool(row and row.random), device)
        counts = table.setdefault(op, [0, 0, 0])
        counts[0] += 1
        counts[1 if why is None else 2] += 1
        if why is not None:
            name = (mine.get(key) or ref.get(key) or {}).get("name", "?")
            failures.append((op, dtype, name, *why))
    return table, failures


def categories(failures: list[tuple[str, str, str, str, str]]
               ) -> list[tuple[str, int, list[str]]]:
    """(category, samples, ops) for each kind of mismatch, the most frequent first."""
    samples: dict[str, int] = defaultdict(int)
    ops: dict[str, dict[str, None]] = defaultdict(dict)
    for op, _, _, category, _ in failures:
        samples[category] += 1
        ops[category][op] = None
    return sorted(((c, n, list(ops[c])) for c, n in samples.items()), key=lambda x: -x[1])


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report(section: str, table: dict[str, list[int]],
           failures: list[tuple[str, str, str, str, str]]) -> list[str]:
    """Markdown lines for parity.md: the section's totals, its mismatch categories with the
    ops in each, the ops with mismatches, and the first mismatches in detail."""
    title = SECTIONS[section]
    passed = sum(c[1] for c in table.values())
    lines = ["", f"## The op database on {title}", "",
             f"{sum(c[0] for c in table.values())} samples over {len(table)} rows: {passed} "
             f"passed, {len(failures)} failed. "]
    if section == "meta":
        lines[-1] += ("Every sample with tensor arguments runs with its inputs moved to "
                      "`device=\"meta\"`, keeping their strides and storage offsets.")
    else:
        lines[-1] += ("Every sample runs inside a `torch._subclasses.FakeTensorMode()` (one "
                      "per row), its inputs converted with `mode.from_tensor`.")
    lines[-1] += (" Results must agree with PyTorch's in structure, dtype, shape, strides, "
                  "storage offset and device (no values); both raising the same kind of "
                  "error matches, and where PyTorch has no implementation (data-dependent "
                  "ops) any Plait error matches. A note in brackets says whether Plait's own "
                  "CPU run gives the same layout as its " + title + " result.")
    if not failures:
        return lines
    lines += ["", "| what differs | samples | ops |", "|---|---|---|"]
    for category, n, ops in categories(failures):
        shown = ", ".join(f"`{op}`" for op in ops[:MAX_OPS])
        more = f" and {len(ops) - MAX_OPS} more" if len(ops) > MAX_OPS else ""
        lines.append(f"| {_md(category)} | {n} | {shown}{more} |")
    lines += ["", "| op | samples | passed | failed |", "|---|---|---|---|"]
    lines += [f"| `{op}` | {c[0]} | {c[1]} | {c[2]} |" for op, c in table.items() if c[2]]
    lines += ["", f"First mismatches of each kind ({title}):", "",
              "| op | dtype | sample | what differs | detail |", "|---|---|---|---|---|"]
    shown: dict[tuple[str, str], int] = defaultdict(int)
    for op, dtype, name, category, detail in failures:
        if shown[(category, op)] or sum(v for (c, _), v in shown.items() if c == category) >= 8:
            continue
        shown[(category, op)] += 1
        lines.append(f"| `{op}` | {dtype} | {_md(name)} | {_md(category)} | {_md(detail)} |")
    return lines
