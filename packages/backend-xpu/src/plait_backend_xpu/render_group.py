"""Kernel groups of ``torch.compile`` (plait-compile's inductor) rendered to a GPU C dialect.

A group is a chain of pointwise aten nodes (``torch._inductor.scheduler.KernelGroup``), maybe
ended by a last-dimension reduction of its last member. Each member's expression comes from
its row in ``torch._inductor.lowering.LOWERINGS`` (C templates with ``{T}`` the result type),
spelled here for a :class:`.render.Dialect`: types from :data:`.render.DTYPES` (float16 and
bfloat16 loaded into float and rounded once, on store), literals and math functions in the
language's spelling. One renderer serves OpenCL C (plait-backend-xpu) and CUDA C++ (NVRTC,
plait-backend-cuda, which carries a copy of this module).

Kernel shapes:

* pointwise: one work item per element of the group's shape. ``rank`` 0 when every input is
  contiguous in that shape; otherwise ``rank`` merged dimensions, each input with its own
  element strides (0 where it broadcasts), so views, transposes and broadcasts need no copies.
  Sizes are arguments: one build serves every size of that rank (dynamic shapes).
* reduction: one work group per row of the last dimension; its items walk the row, compute the
  members, store the pointwise outputs and accumulate; the group then combines its items'
  partial results in local memory. The rows' leading dimensions are ``rank`` merged ones.
* for CPU devices under OpenCL (PoCL), where work items are vectorised across a work group and
  a one-element kernel or a work group's tree runs at a fraction of the vector speed: the
  contiguous pointwise kernel on OpenCL vectors, and a reduction a row per work item with
  lanes of accumulators (as eager xpu's kernels on such devices).

Outputs are fresh contiguous tensors. Everything here is string work (the source is the
program cache's key); :mod:`.render_group_launch` holds the callable a backend's generator
returns, which picks these kernels per call and launches them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from . import render
from .render import DTYPES, Dialect

#: Work items of a reduction's work group (a power of two: the combine halves it).
REDUCTION_GROUP = 256
#: Accumulators of a work item of :meth:`GroupRenderer.reduction_rows_kernel` (two AVX2
#: vectors of float32).
ROW_LANES = 16

#: The math functions lowering templates call; CUDA spells the float versions with ``f``.
_MATH = ("exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tanh", "erf", "pow")
_CALL = re.compile(r"\b(" + "|".join(_MATH) + r")\(")
_FUNCTION = re.compile(r"\b([A-Za-z_]\w*)\(")
#: Functions whose OpenCL vector forms are accurate (plait-backend-xpu's eager vector kernels
#: use the same: PoCL's wide sin/cos miss special values by far).
VECTOR_CALLS = frozenset({"exp", "expm1", "log", "log1p", "sqrt", "tanh", "erf"})

#: Per fused reduction: the identity and how two partial results ``a``, ``b`` combine (a NaN
#: wins max and min: ``b != b`` holds for NaN only, and a NaN ``a`` is never replaced).
_COMBINE = {
    "sum": ("({T})0", "{a} + {b}"),
    "max": ("-INFINITY", "(({b} != {b}) || {b} > {a}) ? {b} : {a}"),
    "min": ("INFINITY", "(({b} != {b}) || {b} < {a}) ? {b} : {a}"),
}


#: The parts of a ``KernelGroup`` this renderer knows; a group with another part set (a newer
#: scheduler's: a matmul it wraps, say) is declined rather than rendered without it.
_KNOWN_PARTS = frozenset({"index", "shape", "device", "members", "inputs", "outputs",
                          "reduction"})


class Unsupported(Exception):
    """The group has something this renderer does not spell: the caller leaves it to the
    interpreter."""


@dataclass(frozen=True)
class GroupKernel:
    """One rendered kernel of a group: source, kernel name, argument letters (``b`` buffer,
    ``l`` 64-bit integer) and the geometry it was rendered for."""

    source: str
    name: str
    signature: str
    rank: int
    reduction: bool


def dtype_name(dtype: Any) -> str:
    """A torch dtype's name without ``torch.``."""
    return str(dtype).removeprefix("torch.")


def _value_dtype(node: Any) -> str:
    return dtype_name(node.meta["val"].dtype)


class GroupRenderer:
    """The kernels of one group in one dialect.

    :param dialect: :data:`.render.OPENCL` or :data:`.render.CUDA`.
    :param group: the ``KernelGroup``.
    :param fp64: whether the device computes in double precision (float64 and the double
        comparisons of an integer with a float need it).
    :raises Unsupported: a member or dtype it cannot render.
    """

    def __init__(self, dialect: Dialect, group: Any, fp64: bool) -> None:
        self.dialect = dialect
        self.group = group
        self.fp64 = fp64
        self.inputs = [_value_dtype(n) for n in group.inputs]
        self.outputs = [_value_dtype(n) for n in group.outputs]
        self.reduction = group.reduction_kind
        if group.reduction is not None and (self.reduction is None
                                            or group.reduction.args[0] is not group.members[-1]):
            raise Unsupported(f"reduction {group.reduction.target}")
        for part in getattr(group, "__dataclass_fields__", {}):
            value = getattr(group, part)
            empty = isinstance(value, (list, tuple, dict, set)) and not value
            if part not in _KNOWN_PARTS and value is not None and not empty:
                raise Unsupported(f"a group with a {part!r}")
        used = set(self.inputs) | set(self.outputs) | {_value_dtype(n) for n in group.members}
        if used - render.REAL:
            raise Unsupported(f"dtypes {sorted(used - render.REAL)}")
        if render.NEEDS_FP64 & used and not fp64:
            raise Unsupported("float64 on a device without double precision")
        self._used = used
        self._pointwise_outputs = [k for k, n in enumerate(group.outputs)
                                   if n is not group.reduction]
        # the members' statements are the same in every kernel: render them (and fail) now
        self._members = self._member_lines()

    # -- expressions ----------------------------------------------------------------------

    def _type(self, dtype: str) -> str:
        return self.dialect.types[DTYPES[dtype].compute]

    def literal(self, value: Any) -> str:
        """A Python number as a literal of the dialect."""
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int) and -(2**63) < value < 2**63:
            return f"{value}{'LL' if self.dialect.name == 'cuda' else 'L'}"
        value = float(value)
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "(-INFINITY)"
        # without double precision a double literal would need cl_khr_fp64: spell it float
        return repr(value) + ("" if self.fp64 else "f")

    def _common(self, node: Any) -> str:
        """The dtype comparison operands are brought to (their promotion; an integer
        compared with a float number: double where the device has it)."""
        import torch

        dtype = None
        saw_float = False
        for arg in node.args:
            if hasattr(arg, "op"):
                d = arg.meta["val"].dtype
                dtype = d if dtype is None else torch.promote_types(dtype, d)
            elif isinstance(arg, float):
                saw_float = True
        if saw_float and dtype is not None and not dtype.is_floating_point:
            dtype = torch.float64 if self.fp64 else torch.float32
        name = dtype_name(dtype)
        if name not in DTYPES:
            raise Unsupported(f"comparison in {name}")
        return name

    def _math(self, expr: str, out_type: str) -> str:
        if self.dialect.name != "cuda" or out_type != "float":
            return expr  # OpenCL C overloads the functions on float and double
        return _CALL.sub(lambda m: f"{m.group(1)}f(", expr)

    def expression(self, node: Any, operand: dict[Any, str], vector: bool = False) -> str:
        """The expression of one member; ``operand`` names the values it reads. ``vector``:
        the operands are vectors of the member's own type, so they are not cast (OpenCL C
        has no casts between vector types; literals stay scalars, which vectors take)."""
        row = self.group.lowering(node)
        if row is None or row.kind != "pointwise":
            raise Unsupported(f"{node.target} is not pointwise")
        out = _value_dtype(node)
        # a bool result is stored as a byte, but computed as the language's bool: a cast to it
        # is a test (0.5 is true), not a truncation
        out_type = "bool" if DTYPES[out].is_bool else self._type(out)
        cast_to = self._type(self._common(node)) if row.cast == "common" else out_type
        ops: list[str] = []
        for position, arg in enumerate(node.args):
            if hasattr(arg, "op"):
                text = operand[arg]
                if vector:
                    ops.append(text)
                    continue
            elif arg is None:
                ops.append("None")
                continue
            else:
                text = self.literal(arg)
            if row.cast == "where" and position == 0:
                text = f"((bool){text})"
            elif row.cast in ("out", "common") or (row.cast == "where" and position > 0):
                text = f"(({cast_to}){text})"
            ops.append(text)
        kwargs = dict(node.kwargs)
        template = row.c(ops, kwargs) if callable(row.c) else row.c.format(*ops, T="{T}")
        if template is None:
            raise Unsupported(f"{node.target} with {kwargs}")
        return self._math(template.replace("{T}", out_type), out_type)

    def _member_lines(self) -> list[str]:
        """One local per member, ``v0``..., from the inputs' locals ``x0``...."""
        operand = {node: f"x{k}" for k, node in enumerate(self.group.inputs)}
        lines = []
        for m, node in enumerate(self.group.members):
            ctype = self._type(_value_dtype(node))
            lines.append(f"const {ctype} v{m} = ({ctype})({self.expression(node, operand)});")
            operand[node] = f"v{m}"
        self._operand = operand
        return lines

    def vector_width(self) -> int:
        """Elements per work item of the vector kernel (:meth:`pointwise_vector`), 0 when the
        group has none: OpenCL C only, every value of one float dtype of
        :data:`.render.VECTOR_WIDTHS`, and every member's expression the same on vectors
        (arithmetic and the functions of :data:`VECTOR_CALLS`: no selects, comparisons,
        casts or ``pow``, whose vector forms take no scalar)."""
        if self.dialect.name != "opencl" or self.reduction is not None:
            return 0
        dtypes = set(self.inputs) | {_value_dtype(n) for n in self.group.members}
        if len(dtypes) != 1 or next(iter(dtypes)) not in render.VECTOR_WIDTHS:
            return 0
        if self._vector_lines() is None:
            return 0
        return render.VECTOR_WIDTHS[next(iter(dtypes))]

    def _vector_lines(self) -> list[str] | None:
        operand = {node: f"x{k}" for k, node in enumerate(self.group.inputs)}
        vtype = f"{self._type(self.inputs[0])}{render.VECTOR_WIDTHS.get(self.inputs[0], 0)}"
        lines = []
        for m, node in enumerate(self.group.members):
            expr = self.expression(node, operand, vector=True)
            if "?" in expr or not set(_FUNCTION.findall(expr)) <= VECTOR_CALLS:
                return None
            lines.append(f"const {vtype} v{m} = {expr};")
            operand[node] = f"v{m}"
        return lines

    # -- kernels --------------------------------------------------------------------------

    def _prelude(self) -> str:
        prelude = render.prelude_for(self.dialect, tuple(sorted(self._used)))
        if self.fp64 and self.dialect.fp64_prelude not in prelude:
            # the templates' constants are double literals cast to the result type: exact
            # where the device has doubles (OpenCL wants the extension enabled for them)
            prelude = self.dialect.fp64_prelude + prelude
        return prelude

    def _loads(self, index: dict[int, str]) -> list[str]:
        return [f"const {self._type(dt)} x{k} = "
                f"{render.load(self.dialect, DTYPES[dt], f'in{k}', index[k])};"
                for k, dt in enumerate(self.inputs)]

    def _stores(self, at: str) -> list[str]:
        return [render.store(self.dialect, DTYPES[self.outputs[k]], f"out{k}", at,
                             self._operand[self.group.outputs[k]])
                for k in self._pointwise_outputs]

    def _buffers(self) -> list[str]:
        t, d = self.dialect.types, self.dialect
        params = [d.pointer.format(T=t[DTYPES[dt].storage]) + f" out{k}"
                  for k, dt in enumerate(self.outputs)]
        params += [f"const {d.pointer.format(T=t[DTYPES[dt].storage])} in{k}"
                   for k, dt in enumerate(self.inputs)]
        return params

    def _walk(self, rest: str, rank: int, indent: str) -> list[str]:
        """Statements that turn the linear index ``rest`` over ``rank`` dims into each
        input's element offset ``at{k}`` (the last dimension varies fastest)."""
        i64 = self.dialect.types["i64"]
        lines = [f"{indent}{i64} at{k} = off{k};" for k in range(len(self.inputs))]
        if rank:
            lines.append(f"{indent}{i64} rest = {rest};")
        for d in reversed(range(rank)):
            steps = "".join(f" at{k} += j * st{k}_{d};" for k in range(len(self.inputs)))
            lines.append(f"{indent}{{ {i64} j = rest % size{d}; rest /= size{d};{steps} }}")
        return lines

    def _geometry_params(self, rank: int) -> list[str]:
        i64 = self.dialect.types["i64"]
        params = [f"{i64} off{k}" for k in range(len(self.inputs))]
        params += [f"{i64} size{d}" for d in range(rank)]
        params += [f"{i64} st{k}_{d}" for k in range(len(self.inputs)) for d in range(rank)]
        return params

    def words(self, rank: int) -> int:
        """Argument words a kernel of ``rank`` takes (buffers, counts, offsets, geometry)."""
        nin = len(self.inputs)
        return len(self.outputs) + nin + 1 + nin + rank * (1 + nin) + nin

    def pointwise(self, rank: int) -> GroupKernel:
        """The pointwise kernel for ``rank`` merged dims (0: every input contiguous).

        Arguments: the outputs and inputs (buffers); ``n``; each input's element offset; the
        ``rank`` sizes; each input's ``rank`` strides."""
        if self.reduction is not None:
            raise ValueError("the group ends with a reduction: use reduction()")
        d, i64 = self.dialect, self.dialect.types["i64"]
        params = self._buffers() + [f"{i64} n"] + self._geometry_params(rank)
        body = [f"  {i64} i = {d.global_index};", "  if (i >= n) return;"]
        if rank == 0:
            index = {k: f"off{k} + i" for k in range(len(self.inputs))}
        else:
            body += self._walk("i", rank, "  ")
            index = {k: f"at{k}" for k in range(len(self.inputs))}
        body += ["  " + line for line in self._loads(index) + self._members + self._stores("i")]
        return self._kernel("plait_group", params, body, rank, reduction=False)

    def pointwise_vector(self) -> GroupKernel:
        """The contiguous kernel on vectors of :meth:`vector_width` elements per work item
        (``vload``, the members on vectors, ``vstore``; the last item's partial run element by
        element), for CPU devices, where PoCL runs a one-element kernel at a fraction of the
        vector speed. Arguments as ``pointwise(0)``'s; launch ``ceil(n / width)`` items."""
        width = self.vector_width()
        if not width:
            raise ValueError("the group has no vector kernel")
        d, i64 = self.dialect, self.dialect.types["i64"]
        params = self._buffers() + [f"{i64} n"] + self._geometry_params(0)
        vtype = f"{self._type(self.inputs[0])}{width}"
        scalar = {k: f"off{k} + e" for k in range(len(self.inputs))}
        stores = [f"vstore{width}({self._operand[self.group.outputs[k]]}, 0, out{k} + base);"
                  for k in self._pointwise_outputs]
        body = [f"  const {i64} base = {d.global_index} * {width};",
                f"  if (base + {width} <= n) {{",
                *(f"    const {vtype} x{k} = vload{width}(0, in{k} + off{k} + base);"
                  for k in range(len(self.inputs))),
                *("    " + line for line in self._vector_lines() or []),
                *("    " + line for line in stores),
                "    return;",
                "  }",
                f"  for ({i64} e = base; e < n; ++e) {{",
                *("    " + line
                  for line in self._loads(scalar) + self._members + self._stores("e")),
                "  }"]
        return self._kernel(f"plait_group_v{width}", params, body, 0, reduction=False)

    def reduction_kernel(self, rank: int) -> GroupKernel:
        """The kernel of a group ending with its reduction, for rows whose leading dims merge
        into ``rank`` dims; launched as one work group of :data:`REDUCTION_GROUP` items per row.

        Arguments: the outputs and inputs (buffers); ``inner`` (the row's length); each
        input's element offset; the ``rank`` leading sizes; each input's ``rank`` strides;
        each input's stride along the row."""
        if self.reduction is None:
            raise ValueError("the group has no reduction: use pointwise()")
        d, t = self.dialect, self.dialect.types
        i64 = t["i64"]
        acc_type = self._type(self.outputs[-1])
        init, combine = _COMBINE[self.reduction]
        init = init.replace("{T}", acc_type)
        nin = len(self.inputs)
        params = (self._buffers() + [f"{i64} inner"] + self._geometry_params(rank)
                  + [f"{i64} sj{k}" for k in range(nin)])
        last = len(self.outputs) - 1
        value = f"v{len(self.group.members) - 1}"
        width = REDUCTION_GROUP
        body = [
            "  " + d.local_array.format(T=acc_type, name="partial", n=width) + ";",
            f"  const {i64} o = {render.axis(d.group_id, 0)};",
            f"  const {i64} lid = {render.axis(d.local_id, 0)};",
            *self._walk("o", rank, "  "),
            f"  {acc_type} acc = {init};",
            f"  for ({i64} j = lid; j < inner; j += {width}) {{",
            *("    " + line for line in self._loads({k: f"at{k} + j * sj{k}" for k in range(nin)})),
            *("    " + line for line in self._members),
            *("    " + line for line in self._stores("o * inner + j")),
            f"    acc = {combine.format(a='acc', b=value)};",
            "  }",
            "  partial[lid] = acc;",
            f"  {d.barrier};",
            f"  for ({i64} s = {width // 2}; s > 0; s >>= 1) {{",
            "    if (lid < s) {",
            f"      const {acc_type} b = partial[lid + s];",
            f"      partial[lid] = {combine.format(a='partial[lid]', b='b')};",
            "    }",
            f"    {d.barrier};",
            "  }",
            f"  if (lid == 0) out{last}[o] = partial[0];",
        ]
        return self._kernel("plait_group_reduce", params, body, rank, reduction=True)

    def reduction_rows_kernel(self, rank: int) -> GroupKernel:
        """The reduction kernel for CPU devices: one work item per row, keeping
        :data:`ROW_LANES` accumulators (element ``e + l`` joins accumulator ``l``, the element
        code unrolled per lane) so that the device's compiler makes vector loads and joins of
        them (a work group's tree does not vectorise there); the lanes are joined in order,
        then the leftover elements. As eager xpu's row reductions on such devices.

        Arguments: those of :meth:`reduction_kernel`, then ``rows``; launch ``rows`` items."""
        if self.reduction is None:
            raise ValueError("the group has no reduction: use pointwise()")
        d, i64 = self.dialect, self.dialect.types["i64"]
        acc_type = self._type(self.outputs[-1])
        init, combine = _COMBINE[self.reduction]
        init = init.replace("{T}", acc_type)
        nin = len(self.inputs)
        params = (self._buffers() + [f"{i64} inner"] + self._geometry_params(rank)
                  + [f"{i64} sj{k}" for k in range(nin)] + [f"{i64} rows"])
        value = f"v{len(self.group.members) - 1}"
        element = [*self._loads({k: f"at{k} + j * sj{k}" for k in range(nin)}),
                   *self._members, *self._stores("o * inner + j")]
        lanes = [f"acc{lane}" for lane in range(ROW_LANES)]
        body = [f"  const {i64} o = {d.global_index};", "  if (o >= rows) return;",
                *self._walk("o", rank, "  "),
                f"  {acc_type} acc = {init};",
                f"  {acc_type} " + ", ".join(f"{v} = {init}" for v in lanes) + ";",
                f"  {i64} e = 0;",
                f"  for (; e + {ROW_LANES} <= inner; e += {ROW_LANES}) {{"]
        for lane, v in enumerate(lanes):
            body += [f"    {{ const {i64} j = e + {lane};",
                     *("      " + line for line in element),
                     f"      {v} = {combine.format(a=v, b=value)}; }}"]
        body += ["  }", *(f"  acc = {combine.format(a='acc', b=v)};" for v in lanes),
                 "  for (; e < inner; ++e) {", f"    const {i64} j = e;",
                 *("    " + line for line in element),
                 f"    acc = {combine.format(a='acc', b=value)};", "  }",
                 f"  out{len(self.outputs) - 1}[o] = acc;"]
        return self._kernel("plait_group_rows", params, body, rank, reduction=True)

    def _kernel(self, name: str, params: list[str], body: list[str], rank: int,
                reduction: bool) -> GroupKernel:
        kernel_name = f"{name}_r{rank}"
        source = (f"{self._prelude()}{self.dialect.kernel} {kernel_name}(\n    "
                  + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
        buffers = len(self.outputs) + len(self.inputs)
        return GroupKernel(source, kernel_name, "b" * buffers + "l" * (len(params) - buffers),
                           rank, reduction)
