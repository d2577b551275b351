"""The kernel renderer: elementwise primitives written once, rendered to a GPU C dialect.

A kernel is described by data: the primitive's expression (:data:`UNARY`, :data:`BINARY`), the
dtypes it reads and writes (:data:`DTYPES`: how each is stored and in which type it is computed)
and the geometry (contiguous, or strided of a given rank). :func:`render_elementwise` turns that
into source through a :class:`Dialect`, the only place where a language's spelling lives.
:data:`OPENCL` is the one this backend builds; :data:`CUDA` renders the same kernels as CUDA C++
for plait-backend-cuda (NVRTC), so the two backends share index arithmetic and dtype handling
rather than keeping two hand-written copies.

Everything here is pure string work (no OpenCL, no torch): the source is the cache key.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- dialects -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """How one language spells what the kernels need."""

    name: str
    prelude: str  # put before every program
    kernel: str  # the qualifier of a kernel function
    pointer: str  # a global pointer to {T}
    global_index: str  # this work item's linear index, as a 64-bit integer
    types: dict[str, str]  # portable scalar type name -> the language's
    half_load: str  # float from a 16-bit float at {p}[{i}]
    half_store: str  # round float {v} to nearest even into {p}[{i}]
    fp64_prelude: str  # what a program using double needs first


OPENCL = Dialect(
    name="opencl",
    prelude="",
    kernel="__kernel void",
    pointer="__global {T}*",
    global_index="(long)get_global_id(0)",
    types={"i8": "char", "u8": "uchar", "i16": "short", "u16": "ushort", "i32": "int",
           "u32": "uint", "i64": "long", "u64": "ulong", "u128": "ulong2", "f32": "float",
           "f64": "double", "f16": "half"},
    # vload_half/vstore_half exist in OpenCL 1.2 whether or not cl_khr_fp16 does.
    half_load="vload_half({i}, {p})",
    half_store="vstore_half_rte({v}, {i}, {p})",
    fp64_prelude="#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
)

CUDA = Dialect(
    name="cuda",
    prelude="#include <cuda_fp16.h>\n",
    kernel='extern "C" __global__ void',
    pointer="{T}*",
    global_index="((long long)blockIdx.x * blockDim.x + threadIdx.x)",
    types={"i8": "signed char", "u8": "unsigned char", "i16": "short", "u16": "unsigned short",
           "i32": "int", "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long",
           "u128": "ulonglong2", "f32": "float", "f64": "double", "f16": "__half"},
    half_load="__half2float({p}[{i}])",
    half_store="{p}[{i}] = __float2half_rn({v})",
    fp64_prelude="",
)

DIALECTS = {d.name: d for d in (OPENCL, CUDA)}

# -- dtypes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DType:
    """How a torch dtype is stored (``storage``) and computed (``compute``) in a kernel, both
    portable type names of :attr:`Dialect.types`; ``raw`` is the unsigned type of its size, for
    moves that need no arithmetic. ``codec`` names a non-native storage (f16, bf16)."""

    storage: str
    compute: str
    raw: str
    codec: str = ""
    is_float: bool = False
    is_bool: bool = False


DTYPES: dict[str, DType] = {
    "bool": DType("u8", "u8", "u8", is_bool=True),
    "uint8": DType("u8", "u8", "u8"),
    "int8": DType("i8", "i8", "u8"),
    "int16": DType("i16", "i16", "u16"),
    "int32": DType("i32", "i32", "u32"),
    "int64": DType("i64", "i64", "u64"),
    # 16-bit floats are computed in float, rounded once on store (as PyTorch's CPU kernels do).
    "float16": DType("f16", "f32", "u16", codec="f16", is_float=True),
    "bfloat16": DType("u16", "f32", "u16", codec="bf16", is_float=True),
    "float32": DType("f32", "f32", "u32", is_float=True),
    "float64": DType("f64", "f64", "u64", is_float=True),
    # complex dtypes are only moved (raw): arithmetic on them is not rendered yet
    "complex64": DType("u64", "u64", "u64"),
    "complex128": DType("u128", "u128", "u128"),
}

NEEDS_FP64 = frozenset({"float64"})

# -- primitives -----------------------------------------------------------------------------

# name -> expression of the inputs {a} (and {b}) in the compute type; the dtypes each accepts.
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGERS = frozenset({"uint8", "int8", "int16", "int32", "int64"})
NUMBERS = FLOATS | INTEGERS

UNARY: dict[str, tuple[str, frozenset[str]]] = {
    "neg": ("-{a}", NUMBERS - {"uint8"}),
    "exp": ("exp({a})", FLOATS),
    "log": ("log({a})", FLOATS),
}

BINARY: dict[str, tuple[str, frozenset[str]]] = {
    "add": ("{a} + {b}", NUMBERS),
    "sub": ("{a} - {b}", NUMBERS),
    "mul": ("{a} * {b}", NUMBERS),
    # integer division is no primitive's true division (and traps on 0 on some devices)
    "div": ("{a} / {b}", FLOATS),
}


def supports(op: str, dtype: str) -> bool:
    """Whether the table renders ``op`` on ``dtype``."""
    row = UNARY.get(op) or BINARY.get(op)
    return row is not None and dtype in row[1]


# -- rendering -----------------------------------------------------------------------------


def _load(d: Dialect, dt: DType, p: str, i: str) -> str:
    """The value at ``p[i]`` in ``dt``'s compute type."""
    if dt.codec == "f16":
        return d.half_load.format(p=p, i=i)
    if dt.codec == "bf16":  # bfloat16 is the high half of a float32
        return f"plait_bf16_to_float({p}[{i}])"
    return f"{p}[{i}]"


def _store(d: Dialect, dt: DType, p: str, i: str, v: str) -> str:
    if dt.codec == "f16":
        return d.half_store.format(p=p, i=i, v=v) + ";"
    if dt.codec == "bf16":
        return f"{p}[{i}] = plait_float_to_bf16({v});"
    return f"{p}[{i}] = {v};"


def _convert(d: Dialect, src: DType, dst: DType, v: str) -> str:
    """``v`` (in ``src``'s compute type) in ``dst``'s compute type, as PyTorch casts."""
    if dst.is_bool:
        return f"({d.types['u8']})({v} != 0)"
    if src.compute == dst.compute:
        return v
    return f"({d.types[dst.compute]})({v})"


def _bf16_helpers(d: Dialect) -> str:
    """bfloat16 <-> float through the bits: truncation is exact one way; the other rounds to
    nearest even and keeps NaN a quiet NaN."""
    t = d.types
    inline = "static inline" if d.name == "opencl" else "__device__ static inline"
    as_float = ("as_float" if d.name == "opencl" else "__uint_as_float")
    as_uint = ("as_uint" if d.name == "opencl" else "__float_as_uint")
    return (
        f"{inline} float plait_bf16_to_float({t['u16']} x) {{\n"
        f"  return {as_float}((({t['u32']})x) << 16);\n}}\n"
        f"{inline} {t['u16']} plait_float_to_bf16(float v) {{\n"
        f"  {t['u32']} bits = {as_uint}(v);\n"
        f"  if (v != v) return ({t['u16']})0x7FC0;\n"
        f"  bits += 0x7FFFu + ((bits >> 16) & 1u);\n"
        f"  return ({t['u16']})(bits >> 16);\n}}\n"
    )


@dataclass(frozen=True)
class Rendered:
    """A rendered kernel: its program source, its name, and its argument letters (``b``
    buffer, ``l`` 64-bit int, ``L`` 64-bit unsigned: the ``_C.Kernel`` signature)."""

    source: str
    name: str
    signature: str


def render_elementwise(dialect: Dialect, name: str, expression: str, out_dtype: str,
                       in_dtypes: tuple[str, ...], rank: int, raw: bool = False,
                       constants: int = 0) -> Rendered:
    """A kernel ``out[i] = expression(inputs[i])`` over ``n`` elements.

    ``rank`` 0 means every operand is contiguous from its offset; otherwise the iteration
    shape has ``rank`` dimensions and each operand its own strides (elements), so views,
    broadcasts (stride 0) and transposes need no copies. ``raw``: operands are moved as
    unsigned words of their size (copies between one dtype, fills). ``constants``: that many
    64-bit unsigned arguments ``c0``... the expression may use (a fill's bits).

    Arguments: out, inputs (buffers); n; each operand's offset; the ``rank`` sizes; each
    operand's ``rank`` strides; the constants.
    """
    t = dialect.types
    out_t = DTYPES[out_dtype]
    ins = [DTYPES[x] for x in in_dtypes]
    operands = ["out"] + [f"in{k}" for k in range(len(ins))]
    kinds = [out_t] + ins
    storage = [dt.raw if raw else dt.storage for dt in kinds]

    params = [dialect.pointer.format(T=t[s]) + f" {p}" for p, s in zip(operands, storage)]
    params.append(f"{t['i64']} n")
    params += [f"{t['i64']} off_{p}" for p in operands]
    params += [f"{t['i64']} size{k}" for k in range(rank)]
    params += [f"{t['i64']} st_{p}{k}" for p in operands for k in range(rank)]
    params += [f"{t['u64']} c{k}" for k in range(constants)]

    body = [f"  {t['i64']} i = {dialect.global_index};", "  if (i >= n) return;"]
    if rank == 0:
        index = {p: f"off_{p} + i" for p in operands}
    else:
        body.append(f"  {t['i64']} rest = i;")
        body += [f"  {t['i64']} at_{p} = off_{p};" for p in operands]
        for k in reversed(range(rank)):  # the last dimension varies fastest
            body.append(f"  {{ {t['i64']} j = rest % size{k}; rest /= size{k};"
                        + "".join(f" at_{p} += j * st_{p}{k};" for p in operands) + " }")
        index = {p: f"at_{p}" for p in operands}

    if raw:
        values = {"a": f"in0[{index['in0']}]"} if ins else {}
        result = expression.format(**values)
        body.append(f"  out[{index['out']}] = {result};")
    else:
        letters = "ab"
        values = {letters[k]: _convert(dialect, dt, out_t, _load(dialect, dt, f"in{k}",
                                                                  index[f"in{k}"]))
                  for k, dt in enumerate(ins)}
        body.append("  " + _store(dialect, out_t, "out", index["out"],
                                  expression.format(**values)))

    kernel_name = f"plait_{name}_{out_dtype}" + "".join(f"_{x}" for x in in_dtypes) + f"_r{rank}"
    prelude = dialect.prelude
    if NEEDS_FP64 & ({out_dtype, *in_dtypes}) and not raw:
        prelude += dialect.fp64_prelude
    if any(dt.codec == "bf16" for dt in kinds) and not raw:
        prelude += _bf16_helpers(dialect)
    source = (f"{prelude}{dialect.kernel} {kernel_name}(\n    " + ",\n    ".join(params)
              + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "b" * len(operands) + "l" * (1 + len(operands) + rank * (1 + len(operands)))
    return Rendered(source, kernel_name, signature + "L" * constants)
