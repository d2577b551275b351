"""C++17 source for a kernel group.

One ``extern "C"`` function per group, called with the sizes and element strides of the
call (so one build serves every size: symbolic sizes arrive as arguments):

    void kernel(int64_t n, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                int64_t flat, void** pointers)

``strides`` holds ``ndim`` strides per input (0 where an input broadcasts); ``flat`` says
every input is contiguous with the group's shape, which takes a single flat loop that gcc
vectorises; otherwise rows of the last dimension are walked with per-input strides. The
pointers are the inputs' then the outputs' (fresh contiguous tensors).

Above ``config.parallel_threshold`` elements the loop (flat elements, or rows) is split into
chunks on plait-backend-cpu's thread pool, whose C entry the loader passes to the library's
``plait_inductor_init`` (``void (*)(int64_t n, int64_t grain, void (*fn)(int64_t begin,
int64_t end, void* ctx), void* ctx)``); the loop body is a static function of ``begin``,
``end`` and an argument struct. Without a pool (none installed, or
``config.cpu_thread_pool`` off) the same function runs the whole range on the calling
thread. OpenMP is used only for ``#pragma omp simd`` (vectorisation; ``-fopenmp-simd``, no
OpenMP runtime); glibc's vector math (libmvec) is declared for the transcendental functions
so that they vectorise too.
"""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from . import config
from .lowering import lowering_of
from .scheduler import C_TYPES, KernelGroup, norm_arguments, norm_dtype

#: Math functions glibc's libmvec has vector versions of (float name = name + "f").
_MVEC = ("exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "erf", "pow")
#: Functions gcc turns into instructions: called through the builtin, never libmvec.
_BUILTIN = ("sqrt",)
_CALL = re.compile(r"\b(" + "|".join(_MVEC + _BUILTIN) + r")\(")


def literal(value: Any) -> str:
    """A Python number as a C++ literal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}LL" if -(2**63) < value < 2**63 else repr(float(value))
    if math.isnan(value):
        return '__builtin_nan("")'
    if math.isinf(value):
        return "__builtin_inf()" if value > 0 else "(-__builtin_inf())"
    return repr(float(value))


def _common_type(node: Any) -> str:
    """The C type comparison operands are brought to (their promotion)."""
    dtype = None
    saw_float = False
    for arg in node.args:
        if hasattr(arg, "op"):
            d = arg.meta["val"].dtype
            dtype = d if dtype is None else torch.promote_types(dtype, d)
        elif isinstance(arg, float):
            saw_float = True
    if saw_float and dtype is not None and not dtype.is_floating_point:
        dtype = torch.float64
    return C_TYPES[dtype]


def _math_names(expr: str, ctype: str) -> str:
    """Spell math calls for the result type (``expf`` for float, builtins for sqrt)."""
    def name(match: re.Match[str]) -> str:
        fn = match.group(1)
        if fn in _BUILTIN:
            return f"__builtin_{fn}{'f' if ctype == 'float' else ''}("
        return f"{fn}{'f' if ctype == 'float' else ''}("
    return _CALL.sub(name, expr)


def node_expression(node: Any, operand: dict[Any, str]) -> str:
    """The C++ expression of one fused node; ``operand`` names the values it reads."""
    row = lowering_of(node.target)
    assert row is not None
    out_type = C_TYPES[node.meta["val"].dtype]
    cast_to = _common_type(node) if row.cast == "common" else out_type
    ops: list[str] = []
    for position, arg in enumerate(node.args):
        if hasattr(arg, "op"):
            text = operand[arg]
        elif arg is None:
            ops.append("None")
            continue
        else:
            text = literal(arg)
        if row.cast == "where" and position == 0:
            text = f"((bool){text})"
        elif row.cast in ("out", "common") or (row.cast == "where" and position > 0):
            text = f"(({cast_to}){text})"
        ops.append(text)
    template = row.c(ops, dict(node.kwargs)) if callable(row.c) else row.c.format(*ops, T="{T}")
    assert template is not None
    return _math_names(template.replace("{T}", out_type), out_type)


def _body(group: KernelGroup, load: str) -> list[str]:
    """The statements of one element: loads, one local per member, stores."""
    lines: list[str] = []
    operand: dict[Any, str] = {}
    for k, node in enumerate(group.inputs):
        ctype = C_TYPES[node.meta["val"].dtype]
        operand[node] = f"a{k}"
        lines.append(f"const {ctype} a{k} = in{k}[{load.format(k=k)}];")
    for m, node in enumerate(group.members):
        ctype = C_TYPES[node.meta["val"].dtype]
        operand[node] = f"v{m}"
        lines.append(f"const {ctype} v{m} = ({ctype})({node_expression(node, operand)});")
    for k, node in enumerate(group.outputs):
        if node is not group.reduction and node is not group.norm:
            lines.append(f"out{k}[i] = {operand[node]};")
    return lines


#: Per accumulation: initial value, ``omp simd`` reduction clause, update of ``acc`` by ``x``.
_ACCUMULATE = {
    "sum": ("({T})0", "reduction(+:acc)", "acc += x;"),
    "max": ("(-__builtin_inf())", "reduction(max:acc) reduction(|:nan)",
            "nan |= (x != x); acc = x > acc ? x : acc;"),
    "min": ("__builtin_inf()", "reduction(min:acc) reduction(|:nan)",
            "nan |= (x != x); acc = x < acc ? x : acc;"),
}


def _rows_head(bases: str, steps: str, inner_strides: str) -> list[str]:
    """The rows ``[begin, end)`` of the last dimension (a chunk's function body): each row's
    base offsets from its index (``bases``, ``steps``), then the inner strides; the caller
    writes the row's loop and closes the outer one."""
    return [
        "  const int64_t ndim = args.ndim;",
        "  const int64_t* sizes = args.sizes;",
        "  const int64_t* strides = args.strides;",
        "  const int64_t inner = sizes[ndim - 1];",
        "  for (int64_t o = begin; o < end; ++o) {",
        f"    {bases}",
        "    int64_t rest = o;",
        "    for (int64_t d = ndim - 2; d >= 0; --d) {",
        "      const int64_t idx = rest % sizes[d]; rest /= sizes[d];",
        f"      {steps}",
        "    }",
        f"    {inner_strides}",
    ]


def _reduction_loops(group: KernelGroup, strided: list[str], bases: str, steps: str,
                     inner_strides: str) -> list[str]:
    """Rows of the last dimension, each accumulated into one result (a NaN wins max/min)."""
    from .scheduler import FUSED_REDUCTIONS

    kind = FUSED_REDUCTIONS[group.reduction.target]
    ctype = C_TYPES[group.reduction.meta["val"].dtype]
    init, clause, update = _ACCUMULATE[kind]
    result = len(group.outputs) - 1
    value = f"v{len(group.members) - 1}"
    final = "acc" if kind == "sum" else f"(nan ? ({ctype})__builtin_nan(\"\") : acc)"
    return [
        *_rows_head(bases, steps, inner_strides),
        f"    {ctype} acc = {init.replace('{T}', ctype)};",
        "    int nan = 0;",
        f"#pragma omp simd {clause}",
        "    for (int64_t j = 0; j < inner; ++j) {",
        "      const int64_t i = o * inner + j;",
        *("      " + line for line in strided),
        f"      const {ctype} x = {value};",
        f"      {update}",
        "    }",
        "    (void)nan;",
        f"    out{result}[o] = {final};",
        "  }",
        "}",
    ]


def _norm_loops(group: KernelGroup, bases: str, steps: str, inner_strides: str
                ) -> list[str]:
    """Rows of the last dimension, each layer-normalised: the prologue's value kept in a row
    of an output while its sum accumulates, then the variance about the mean (two passes, as
    eager's kernel), then the normalised, scaled and shifted row; mean and rstd per row.

    The row kept is the prologue's own output when the graph reads it (the residual stream
    of ``x + f(x)`` before a layer norm), else the layer norm's output row, normalised in
    place: a separate row buffer, one store more per element, made the kernel 1.7x slower
    (98 against 57 us on nanoGPT's (12, 64, 128)). Rows whose inputs all step by one
    element take loops with unit-stride loads, which gcc vectorises; others read through
    the strides. The next row's offsets come from a carry, not a division per row."""
    ctype = C_TYPES[norm_dtype(group.norm)]
    weight, bias, eps = norm_arguments(group.norm)
    out, mean, rstd = len(group.outputs) - 1, len(group.outputs), len(group.outputs) + 1
    last = group.members[-1]
    value = f"v{len(group.members) - 1}"
    stored = last in group.outputs  # the prologue's value is written to its own output
    kept = group.outputs.index(last) if stored else out
    result = "rowp[j]" if kept == out else f"out{out}[o * inner + j]"
    sqrt = "__builtin_sqrtf" if ctype == "float" else "__builtin_sqrt"
    unit = " && ".join(f"s{k} == 1" for k in range(len(group.inputs)))

    def row(load: str) -> list[str]:
        scaled = "(rowp[j] - mean) * rstd"
        for param, op in ((weight, "*"), (bias, "+")):
            if param is not None:
                k = group.inputs.index(param)
                scaled = f"{scaled} {op} in{k}[{load.format(k=k)}]"
        return [
            f"{ctype}* __restrict rowp = out{kept} + o * inner;",
            f"{ctype} acc = 0;",
            "#pragma omp simd reduction(+:acc)",
            "for (int64_t j = 0; j < inner; ++j) {",
            "  const int64_t i = o * inner + j;",
            *("  " + line for line in _body(group, load)),
            *([] if stored else [f"  rowp[j] = {value};"]),
            f"  acc += {value};",
            "}",
            f"const {ctype} mean = acc / ({ctype})inner;",
            f"{ctype} squares = 0;",
            "#pragma omp simd reduction(+:squares)",
            "for (int64_t j = 0; j < inner; ++j) {",
            f"  const {ctype} d = rowp[j] - mean;",
            "  squares += d * d;",
            "}",
            f"const {ctype} rstd = ({ctype})1 / {sqrt}(squares / ({ctype})inner"
            f" + ({ctype}){literal(eps)});",
            "#pragma omp simd",
            "for (int64_t j = 0; j < inner; ++j) {",
            f"  {result} = {scaled};",
            "}",
            f"out{mean}[o] = mean;",
            f"out{rstd}[o] = rstd;",
        ]

    count = len(group.inputs)
    advance = " ".join(f"b{k} += strides[{k} * ndim + d];" for k in range(count))
    rewind = " ".join(f"b{k} -= sizes[d] * strides[{k} * ndim + d];" for k in range(count))
    return [
        "  const int64_t ndim = args.ndim;",
        "  const int64_t* sizes = args.sizes;",
        "  const int64_t* strides = args.strides;",
        "  const int64_t inner = sizes[ndim - 1];",
        "  std::vector<int64_t> index(ndim > 1 ? ndim - 1 : 1, 0);",
        f"  {bases}",
        "  int64_t rest = begin;",
        "  for (int64_t d = ndim - 2; d >= 0; --d) {",
        "    const int64_t idx = rest % sizes[d]; rest /= sizes[d];",
        "    index[d] = idx;",
        f"    {steps}",
        "  }",
        f"  {inner_strides}",
        f"  const bool unit = {unit};",
        "  for (int64_t o = begin; o < end; ++o) {",
        "    if (unit) {",
        *("      " + line for line in row("b{k} + j")),
        "    } else {",
        *("      " + line for line in row("b{k} + j * s{k}")),
        "    }",
        "    for (int64_t d = ndim - 2; d >= 0; --d) {",
        f"      {advance}",
        "      if (++index[d] < sizes[d]) break;",
        f"      index[d] = 0; {rewind}",
        "    }",
        "  }",
        "}",
    ]


def _declarations(body: str) -> list[str]:
    lines = []
    for fn in _MVEC:
        for suffix, ctype in (("f", "float"), ("", "double")):
            if re.search(rf"\b{fn}{suffix}\(", body):
                args = ", ".join([ctype] * (2 if fn == "pow" else 1))
                lines += ["#ifndef PLAIT_NO_MVEC", "#pragma omp declare simd notinbranch",
                          "#endif", f"{ctype} {fn}{suffix}({args});"]
    return lines


#: Elements per chunk on the pool (rows: enough rows for this many elements): a chunk must
#: outweigh waking a worker, and several chunks per thread let a late worker take fewer.
CHUNK_ELEMENTS = 16384

#: What every library starts with after its math declarations: the pool's C signature, the
#: pointer the loader sets (null: serial) and the call arguments a chunk reads.
_PREAMBLE = [
    "#include <atomic>",
    "typedef void (*plait_chunk_fn)(int64_t begin, int64_t end, void* ctx);",
    "typedef void (*plait_parallel_for_fn)(int64_t n, int64_t grain, plait_chunk_fn fn,"
    " void* ctx);",
    "static std::atomic<plait_parallel_for_fn> plait_pool{nullptr};",
    "// Called by the loader with the thread pool's C entry (null: loops run serially).",
    'extern "C" void plait_inductor_init(plait_parallel_for_fn pool) {',
    "  plait_pool.store(pool, std::memory_order_relaxed);",
    "}",
    'extern "C" plait_parallel_for_fn plait_inductor_pool() {',
    "  return plait_pool.load(std::memory_order_relaxed);",
    "}",
    "namespace {",
    "struct Args {",
    "  int64_t ndim;",
    "  const int64_t* sizes;",
    "  const int64_t* strides;",
    "  void** pointers;",
    "};",
    "// Runs fn over [0, count) on the pool when `parallel` and a pool was given, else inline.",
    "void split(int64_t count, int64_t grain, plait_chunk_fn fn, Args* args, bool parallel) {",
    "  const plait_parallel_for_fn pool = plait_pool.load(std::memory_order_relaxed);",
    "  if (parallel && pool != nullptr) {",
    "    pool(count, grain, fn, args);",
    "  } else {",
    "    fn(0, count, args);",
    "  }",
    "}",
]


def _chunk_head(name: str, pointers: list[str]) -> list[str]:
    """The opening of a chunk function: its arguments and typed pointers."""
    return [f"void {name}(int64_t begin, int64_t end, void* ctx) {{",
            "  const Args& args = *static_cast<const Args*>(ctx);",
            "  void** pointers = args.pointers;", *pointers]


def _entry(name: str, threshold: int, flat: bool) -> list[str]:
    """The exported kernel: its arguments into an ``Args``, then the chunked loop."""
    lines = ["}  // namespace",
             'extern "C" void ' + name + "(int64_t n, int64_t ndim, const int64_t* sizes, "
             "const int64_t* strides, int64_t flat, void** pointers) {",
             "  Args args{ndim, sizes, strides, pointers};",
             f"  const bool parallel = n > {threshold};"]
    if flat:
        lines += ["  if (flat || ndim == 0) {",
                  f"    split(n, {CHUNK_ELEMENTS}, flat_chunk, &args, parallel);",
                  "    return;",
                  "  }"]
    else:
        lines += ["  (void)flat;"]
    lines += ["  const int64_t inner = sizes[ndim - 1];",
              "  const int64_t outer = inner ? n / inner : 0;",
              f"  const int64_t grain = inner >= {CHUNK_ELEMENTS} ? 1 : "
              f"{CHUNK_ELEMENTS} / (inner > 0 ? inner : 1);",
              "  split(outer, grain, rows_chunk, &args, parallel);",
              "}",
              ""]
    return lines


def render(group: KernelGroup, name: str = "kernel") -> str:
    """The C++ source of ``group`` (deterministic: the disk cache keys on it)."""
    flat = _body(group, "i")
    strided = _body(group, "b{k} + j * s{k}")
    declarations = _declarations("\n".join(flat))
    nin = len(group.inputs)
    pointers = [f"  const {C_TYPES[n.meta['val'].dtype]}* __restrict in{k} = "
                f"(const {C_TYPES[n.meta['val'].dtype]}*)pointers[{k}];"
                for k, n in enumerate(group.inputs)]
    out_types = [C_TYPES[n.meta["val"].dtype] for n in group.outputs if n is not group.norm]
    if group.norm is not None:  # out, mean, rstd
        out_types += [C_TYPES[norm_dtype(group.norm)]] * 3
    pointers += [f"  {ctype}* __restrict out{k} = ({ctype}*)pointers[{nin + k}];"
                 for k, ctype in enumerate(out_types)]
    bases = " ".join(f"int64_t b{k} = 0;" for k in range(nin))
    steps = " ".join(f"b{k} += idx * strides[{k} * ndim + d];" for k in range(nin))
    inner = " ".join(f"const int64_t s{k} = strides[{k} * ndim + ndim - 1];" for k in range(nin))
    threshold = config.parallel_threshold
    if group.norm is not None:
        head = ["// Generated by plait torch._inductor: a pointwise group and its layer norm.",
                "#include <cstdint>", "#include <vector>", 'extern "C" {', *declarations, "}",
                *_PREAMBLE, *_chunk_head("rows_chunk", pointers)]
        rows = _norm_loops(group, bases, steps, inner)
        # a layer norm makes three passes over each row: it splits from a quarter of the
        # threshold, as the backward template does (nanoGPT's (12, 64, 128) rows)
        return "\n".join(head + rows + _entry(name, threshold // 4, flat=False))
    if group.reduction is not None:
        head = ["// Generated by plait torch._inductor: a pointwise group and its reduction.",
                "#include <cstdint>", 'extern "C" {', *declarations, "}", *_PREAMBLE,
                *_chunk_head("rows_chunk", pointers)]
        rows = _reduction_loops(group, strided, bases, steps, inner)
        return "\n".join(head + rows + _entry(name, threshold, flat=False))
    source = [
        "// Generated by plait torch._inductor: one fused pointwise kernel group.",
        "#include <cstdint>",
        'extern "C" {',
        *declarations,
        "}",
        *_PREAMBLE,
        *_chunk_head("flat_chunk", pointers),
        "#pragma omp simd",
        "  for (int64_t i = begin; i < end; ++i) {",
        *("    " + line for line in flat),
        "  }",
        "}",
        *_chunk_head("rows_chunk", pointers),
        *_rows_head(bases, steps, inner),
        "#pragma omp simd",
        "    for (int64_t j = 0; j < inner; ++j) {",
        "      const int64_t i = o * inner + j;",
        *("      " + line for line in strided),
        "    }",
        "  }",
        "}",
        *_entry(name, threshold, flat=True),
    ]
    return "\n".join(source)
