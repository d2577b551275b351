"""``Compare``: a table of measurements, rows by sub-label (and thread count), columns by
description, one table per label."""

from __future__ import annotations

import sys

from torch.utils.benchmark.utils.common import Measurement, select_unit, trim_sigfig

__all__ = ["Compare"]


class Compare:
    """``Compare(results)``; ``print(compare)`` or :meth:`print` shows the median of each
    measurement, in one unit per table."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results = list(results)
        self._trim = False
        self._colorize = False
        self._highlight_warnings = False

    def extend_results(self, results: list[Measurement]) -> None:
        """Add more measurements."""
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print each median to the figures its spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Accepted for PyTorch compatibility; the table stays plain text."""
        self._colorize = True

    def highlight_warnings(self) -> None:
        """Mark the cells whose runs vary by more than 10% (IQR over median) with
        ``(! XX%)``."""
        self._highlight_warnings = True

    def print(self) -> None:
        """Write the table to standard output (what this method is for, as in PyTorch)."""
        sys.stdout.write(str(self) + "\n")

    def _cell(self, m: Measurement, scale: float) -> str:
        value = m.median / scale
        if self._trim:
            value = trim_sigfig(value, m.significant_figures)
        text = f"{value:.1f}" if value >= 10 else f"{value:.3g}"
        if self._highlight_warnings and m.median > 0 and m.iqr / m.median > 0.1:
            text += f" (! {100 * m.iqr / m.median:.0f}%)"
        return text

    def _table(self, label: str | None, results: list[Measurement]) -> str:
        columns: list[str | None] = []
        rows: list[tuple[int, str | None]] = []
        cells: dict[tuple[tuple[int, str | None], str | None], Measurement] = {}
        for m in Measurement.merge(results):
            row = (m.num_threads, m.sub_label if m.sub_label is not None else m.stmt)
            if m.description not in columns:
                columns.append(m.description)
            if row not in rows:
                rows.append(row)
            cells[(row, m.description)] = m
        unit, scale = select_unit(min(m.median for m in cells.values()))
        header = ["", *("" if c is None else c for c in columns)]
        body: list[list[str]] = []
        thread_lines: dict[int, int] = {}
        for row in rows:
            if row[0] not in thread_lines:
                thread_lines[row[0]] = len(body)
                body.append([])
            body.append([str(row[1]), *(self._cell(cells[(row, c)], scale)
                                        if (row, c) in cells else "" for c in columns)])
        widths = [max(len(r[i]) for r in [header, *body] if r) for i in range(len(header))]

        def line(values: list[str]) -> str:
            first = values[0].rjust(widths[0])
            rest = [v.center(w) for v, w in zip(values[1:], widths[1:])]
            return " | ".join([first, *rest]).rstrip()

        width = len(line(header))
        title = f" {label} " if label else ""
        out = [f"[{title.center(width - 2, '-')}]", line(header)]
        threads_by_line = {v: k for k, v in thread_lines.items()}
        for i, values in enumerate(body):
            if not values:
                count = threads_by_line[i]
                out.append(f"{count} thread{'s' if count != 1 else ''}: ".ljust(width, "-"))
            else:
                out.append(line(values))
        out.append("")
        unit_names = {"s": "seconds", "ms": "milliseconds", "us": "microseconds",
                      "ns": "nanoseconds"}
        out.append(f"Times are in {unit_names[unit]} ({unit}).")
        return "\n".join(out)

    def __str__(self) -> str:
        by_label: dict[str | None, list[Measurement]] = {}
        for m in self._results:
            by_label.setdefault(m.label, []).append(m)
        return "\n\n".join(self._table(label, group) for label, group in by_label.items()) \
            + "\n"
