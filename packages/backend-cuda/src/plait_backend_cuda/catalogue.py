"""Every kernel the shared tables render, in the CUDA dialect: one entry per family, dtype and
variant that a primitive can ask for (geometry at a representative rank).

Kernels are rendered when first used, so nothing else ever renders all of them; this catalogue
is what the compile checks walk (``tests/test_backend_cuda_kernels.py`` with NVRTC, no GPU
needed) so that a change to a table or to the CUDA dialect that breaks CUDA shows up on
every machine, not only on one with a GPU.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._render import (
    pointwise,
    render,
    render_conv,
    render_fft,
    render_fused,
    render_index,
    render_matmul,
    render_reduce,
    render_sort,
)

D = render.CUDA
RANKS = (0, 3)  # contiguous, and strided over three merged dims
FLOATS = ("float16", "bfloat16", "float32", "float64")
SORTABLE = ("bool", "uint8", "int8", "int16", "int32", "int64", *FLOATS)


def _elementwise() -> Iterator[render.Rendered]:
    rows = {**pointwise.ROWS, **{f"div_{mode}": row for mode, row in pointwise.DIV.items()}}
    for op, row in rows.items():
        for dtype in render.DTYPES:
            expression, raw = row.expression(dtype)
            if expression is None:
                continue
            binary = op in pointwise.BINARY or op in pointwise.COMPARE or op.startswith("div_")
            arity = 2 if binary else 1
            out = "bool" if row.writes_bool else dtype
            for rank in RANKS:
                yield render.render_elementwise(
                    D, str(op), expression, out, (dtype,) * arity, rank, raw=raw,
                    helpers=pointwise.helpers_source(D, row, dtype),
                    result="bool" if row.writes_bool else None)


def _memory() -> Iterator[render.Rendered]:
    for dst in render.DTYPES:
        for src in render.DTYPES:  # complex to real keeps the real part (PyTorch warns)
            yield render.render_elementwise(D, "copy_", "{a}", dst, (src,), 3, raw=dst == src)
        raw = D.types[render.DTYPES[dst].raw]
        fill = (D.pair.format(T=raw, x="c0", y="c1") if dst == "complex128" else f"({raw})c0")
        yield render.render_elementwise(D, "fill_", fill, dst, (), 0, raw=True,
                                        constants=2 if dst == "complex128" else 1)
        yield render.render_elementwise(D, "where", pointwise.WHERE, dst, ("bool", dst, dst), 3,
                                        raw=True)
        if dst in render.COMPLEX:
            continue
        yield render.render_elementwise(D, "arange_float", "d0 + (d1 * i)", dst, (), 0,
                                        float_constants=2)
        if dst in render.INTEGERS:
            i64 = D.types["i64"]
            yield render.render_elementwise(D, "arange_int", f"({{T}})(({i64})c0 + i * ({i64})c1)",
                                            dst, (), 0, constants=2)


def _reductions() -> Iterator[render.Rendered]:
    for op, row in render_reduce.REDUCTIONS.items():
        complex_too = render.COMPLEX if op in render_reduce.COMPLEX_JOINS else frozenset()
        for dtype in render.REAL | complex_too:
            out = "bool" if op in ("any", "all") else dtype
            for group in (0, 256):
                yield render_reduce.render_reduction(D, op, out, dtype, 2, 2, group)
            acc = render_reduce.accumulator_type(row.accumulator, render.DTYPES[dtype])
            scratch = {"f32": "float32", "f64": "float64", "u64": "int64", "i64": "int64",
                       "i32": "int32", "c64": "complex64", "c128": "complex128"}.get(acc, dtype)
            yield render_reduce.render_reduction(D, op, scratch, dtype, 1, 1, 256, split=True)
            yield render_reduce.render_reduction(D, op, out, scratch, 1, 1, 0)
    for op in render_reduce.ARG_BETTER:
        for dtype in render.NUMBERS:
            for group in (0, 256):
                yield render_reduce.render_reduction(D, op, "int64", dtype, 2, 1, group)
    for op in (*render_reduce.SCANS, *render_reduce.CUM_EXTREME):
        complex_too = render.COMPLEX if op in render_reduce.COMPLEX_JOINS else frozenset()
        for dtype in render.NUMBERS | complex_too:
            yield render_reduce.render_scan(D, op, dtype, 2)


def _linear_algebra() -> Iterator[render.Rendered]:
    for dtype in (*FLOATS, "int32", "int64", *sorted(render.COMPLEX)):
        for batch_rank in (0, 2):
            yield render_matmul.render_matmul(D, dtype, batch_rank, 16)
    for dtype in FLOATS:
        for spatial in (1, 2, 3):
            for transposed in (False, True):
                yield render_conv.render_convolution(D, dtype, spatial, transposed, "f64")
    for kind in ("c2c", "r2c", "c2r"):
        for real in ("f32", "f64"):
            yield render_fft.render_dft(D, kind, real, 2, "f64")


def _indexing() -> Iterator[render.Rendered]:
    for dtype in render.DTYPES:
        yield render_index.render_gather(D, dtype, 3)
        yield render_index.render_scatter(D, dtype, 3)
        if dtype not in render.COMPLEX:  # complex nonzero declines (CPU fallback)
            yield render_index.render_nonzero(D, dtype, 3, False)
            yield render_index.render_nonzero(D, dtype, 3, True)
    for dtype in render.NUMBERS:
        for reduce in render_index.SCATTER_REDUCE:
            for include_self in (False, True):
                yield render_index.render_scatter_reduce(D, dtype, 3, reduce, include_self)
    for dtype in SORTABLE:
        for descending in (False, True):
            yield render_sort.render_sort(D, dtype, 2, descending)
    for dtype in render.NUMBERS:
        for right in (False, True):
            yield render_index.render_searchsorted(D, dtype, right)
    yield render_index.render_random_bits(D, 3)


def _fused() -> Iterator[render.Rendered]:
    for dtype in FLOATS:
        for log in (False, True):
            yield render_fused.render_softmax(D, dtype, log)
            yield render_fused.render_softmax_backward(D, dtype, log)


FAMILIES = {"elementwise": _elementwise, "memory": _memory, "reductions": _reductions,
            "linear_algebra": _linear_algebra, "indexing": _indexing, "fused": _fused}


def every_kernel() -> Iterator[tuple[str, render.Rendered]]:
    """``(family, kernel)`` for every kernel of the catalogue, each name once (two families
    may render one kernel alike)."""
    seen: set[str] = set()
    for family, walk in FAMILIES.items():
        for rendered in walk():
            if rendered.name not in seen:
                seen.add(rendered.name)
                yield family, rendered


def combined_source(kernels: list[render.Rendered]) -> str:
    """One translation unit holding ``kernels``, each program in a namespace of its own (their
    helper functions share names; the ``extern "C"`` kernels keep theirs), so that a compiler
    checks them all in one run."""
    return "\n".join(f"namespace plait_program_{k} {{\n{rendered.source}\n}}"
                      for k, rendered in enumerate(kernels))
