"""The kernel renderer: primitives written once as data, rendered to a GPU C dialect.

A kernel is described by data: an expression of its inputs (:mod:`.pointwise` holds the
elementwise rows, :mod:`.render_reduce` and :mod:`.render_matmul` the other families), the
dtypes it reads and writes (:data:`DTYPES`: how each is stored and in which type it is
computed) and the geometry (contiguous, or strided of a given rank). The renderers turn that
into source through a :class:`Dialect`, the only place where a language's spelling lives.
:data:`OPENCL` is the one this backend builds; :data:`CUDA` renders the same kernels as CUDA
C++ for plait-backend-cuda (NVRTC), so the two backends share index arithmetic and dtype
handling rather than keeping two hand-written copies.

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
    function: str  # the qualifiers of a helper function
    pointer: str  # a global pointer to {T}
    global_index: str  # this work item's linear index, as a 64-bit integer
    types: dict[str, str]  # portable scalar type name -> the language's
    half_load: str  # float from a 16-bit float at {p}[{i}]
    half_store: str  # round float {v} to nearest even into {p}[{i}]
    fp64_prelude: str  # what a program using double needs first
    as_float: str  # reinterpret 32 bits as a float
    as_uint: str  # reinterpret a float's 32 bits as an unsigned int
    group_id: str  # work-group index along dimension {d}
    local_id: str  # work item index in its group along dimension {d}
    local_size: str  # work-group size along dimension {d}
    local_array: str  # a work-group shared array: {T} {name}[{n}]
    barrier: str  # wait for the group, local memory visible
    pair: str  # a complex value of type {T} from its parts {x} and {y}


OPENCL = Dialect(
    name="opencl",
    prelude="",
    kernel="__kernel void",
    function="static inline",
    pointer="__global {T}*",
    global_index="(long)get_global_id(0)",
    types={"i8": "char", "u8": "uchar", "i16": "short", "u16": "ushort", "i32": "int",
           "u32": "uint", "i64": "long", "u64": "ulong", "u128": "ulong2", "f32": "float",
           "f64": "double", "f16": "half", "c64": "float2", "c128": "double2"},
    # vload_half/vstore_half exist in OpenCL 1.2 whether or not cl_khr_fp16 does.
    half_load="vload_half({i}, {p})",
    half_store="vstore_half_rte({v}, {i}, {p})",
    fp64_prelude="#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
    as_float="as_float",
    as_uint="as_uint",
    group_id="(long)get_group_id({d})",
    local_id="(long)get_local_id({d})",
    local_size="(long)get_local_size({d})",
    local_array="__local {T} {name}[{n}]",
    barrier="barrier(CLK_LOCAL_MEM_FENCE)",
    pair="(({T})({x}, {y}))",
)

# NVRTC compiles without the toolkit's headers (the nvidia-cuda-nvrtc wheel ships none), so the
# CUDA dialect needs none: 16-bit floats are stored as their bits and converted by PTX's cvt
# (round to nearest even), and the two constants the helpers use are spelled here.
_CUDA_PRELUDE = (
    "#ifndef INFINITY\n#define INFINITY __int_as_float(0x7f800000)\n#endif\n"
    "#ifndef NAN\n#define NAN __int_as_float(0x7fc00000)\n#endif\n"
    "__device__ static inline float plait_half_to_float(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n}\n"
    "__device__ static inline unsigned short plait_float_to_half(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n}\n"
)

CUDA = Dialect(
    name="cuda",
    prelude=_CUDA_PRELUDE,
    kernel='extern "C" __global__ void',
    function="__device__ static inline",
    pointer="{T}*",
    global_index="((long long)blockIdx.x * blockDim.x + threadIdx.x)",
    types={"i8": "signed char", "u8": "unsigned char", "i16": "short", "u16": "unsigned short",
           "i32": "int", "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long",
           "u128": "ulonglong2", "f32": "float", "f64": "double", "f16": "unsigned short",
           "c64": "float2", "c128": "double2"},
    half_load="plait_half_to_float({p}[{i}])",
    half_store="{p}[{i}] = plait_float_to_half({v})",
    fp64_prelude="",
    as_float="__uint_as_float",
    as_uint="__float_as_uint",
    group_id="(long long)blockIdx.{xyz}",
    local_id="(long long)threadIdx.{xyz}",
    local_size="(long long)blockDim.{xyz}",
    local_array="__shared__ {T} {name}[{n}]",
    barrier="__syncthreads()",
    pair="make_{T}({x}, {y})",
)

DIALECTS = {d.name: d for d in (OPENCL, CUDA)}


def axis(spelling: str, d: int) -> str:
    """A dialect's per-dimension spelling (:attr:`Dialect.group_id`...) for dimension ``d``."""
    return spelling.format(d=d, xyz="xyz"[d])


# -- dtypes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DType:
    """How a torch dtype is stored (``storage``) and computed (``compute``) in a kernel, both
    portable type names of :attr:`Dialect.types`; ``raw`` is the unsigned type of its size, for
    moves that need no arithmetic; ``wrap`` the unsigned type integer arithmetic wraps in (at
    least 32 bits, so that 8- and 16-bit products never overflow a promoted ``int``).
    ``codec`` names a non-native storage (f16, bf16); ``bits`` is the storage's width."""

    storage: str
    compute: str
    raw: str
    bits: int
    codec: str = ""
    is_float: bool = False
    is_bool: bool = False
    is_signed: bool = False
    wrap: str = ""


DTYPES: dict[str, DType] = {
    "bool": DType("u8", "u8", "u8", 8, is_bool=True, wrap="u32"),
    "uint8": DType("u8", "u8", "u8", 8, wrap="u32"),
    "int8": DType("i8", "i8", "u8", 8, is_signed=True, wrap="u32"),
    "int16": DType("i16", "i16", "u16", 16, is_signed=True, wrap="u32"),
    "int32": DType("i32", "i32", "u32", 32, is_signed=True, wrap="u32"),
    "int64": DType("i64", "i64", "u64", 64, is_signed=True, wrap="u64"),
    # 16-bit floats are computed in float, rounded once on store (as PyTorch's CPU kernels do).
    "float16": DType("f16", "f32", "u16", 16, codec="f16", is_float=True, is_signed=True),
    "bfloat16": DType("u16", "f32", "u16", 16, codec="bf16", is_float=True, is_signed=True),
    "float32": DType("f32", "f32", "u32", 32, is_float=True, is_signed=True),
    "float64": DType("f64", "f64", "u64", 64, is_float=True, is_signed=True),
    # complex values are pairs (real part first), computed in their own type
    "complex64": DType("c64", "c64", "u64", 64, is_signed=True),
    "complex128": DType("c128", "c128", "u128", 128, is_signed=True),
}
PART = {"c64": "f32", "c128": "f64"}  # a complex type's part

NEEDS_FP64 = frozenset({"float64", "complex128"})
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGERS = frozenset({"uint8", "int8", "int16", "int32", "int64"})
NUMBERS = FLOATS | INTEGERS
REAL = NUMBERS | {"bool"}
COMPLEX = frozenset({"complex64", "complex128"})


def literal(value: float, compute: str) -> str:
    """A floating constant in compute type ``compute`` (``f32`` literals carry ``f``, so a
    float kernel never computes in double)."""
    text = repr(float(value))
    return text + "f" if compute == "f32" else text


# -- loads, stores, conversions ---------------------------------------------------------------


def load(d: Dialect, dt: DType, p: str, i: str) -> str:
    """The value at ``p[i]`` in ``dt``'s compute type."""
    if dt.codec == "f16":
        return d.half_load.format(p=p, i=i)
    if dt.codec == "bf16":  # bfloat16 is the high half of a float32
        return f"plait_bf16_to_float({p}[{i}])"
    return f"{p}[{i}]"


def store(d: Dialect, dt: DType, p: str, i: str, v: str) -> str:
    """The statement storing ``v`` (in ``dt``'s compute type) at ``p[i]``."""
    if dt.codec == "f16":
        return d.half_store.format(p=p, i=i, v=v) + ";"
    if dt.codec == "bf16":
        return f"{p}[{i}] = plait_float_to_bf16({v});"
    return f"{p}[{i}] = {v};"


def convert(d: Dialect, src: DType, dst: DType, v: str) -> str:
    """``v`` (in ``src``'s compute type) in ``dst``'s compute type, as PyTorch casts (a real
    value becomes a complex one with a zero imaginary part; a complex value becomes its real
    part, where PyTorch warns: the caller's concern)."""
    if dst.is_bool and src.compute in PART:
        return f"({d.types['u8']})(({v}).x != 0 || ({v}).y != 0)"
    if dst.is_bool:
        return f"({d.types['u8']})(({v}) != 0)"
    if src.compute == dst.compute:
        return v
    if dst.compute in PART:
        part = d.types[PART[dst.compute]]
        if src.compute in PART:
            x, y = f"({part})(({v}).x)", f"({part})(({v}).y)"
        else:
            x, y = f"({part})({v})", f"({part})0"
        return d.pair.format(T=d.types[dst.compute], x=x, y=y)
    if src.compute in PART:
        return f"({d.types[dst.compute]})(({v}).x)"
    return f"({d.types[dst.compute]})({v})"


def bf16_helpers(d: Dialect) -> str:
    """bfloat16 <-> float through the bits: truncation is exact one way; the other rounds to
    nearest even and keeps NaN a quiet NaN."""
    t = d.types
    return (
        f"{d.function} float plait_bf16_to_float({t['u16']} x) {{\n"
        f"  return {d.as_float}((({t['u32']})x) << 16);\n}}\n"
        f"{d.function} {t['u16']} plait_float_to_bf16(float v) {{\n"
        f"  {t['u32']} bits = {d.as_uint}(v);\n"
        f"  if (v != v) return ({t['u16']})0x7FC0;\n"
        f"  bits += 0x7FFFu + ((bits >> 16) & 1u);\n"
        f"  return ({t['u16']})(bits >> 16);\n}}\n"
    )


def prelude_for(d: Dialect, dtypes: tuple[str, ...], raw: bool = False) -> str:
    """What a program over ``dtypes`` needs before its code: the language's prelude, double
    precision, the bfloat16 helpers (none for raw moves)."""
    prelude = d.prelude
    if not raw and NEEDS_FP64 & set(dtypes):
        prelude += d.fp64_prelude
    if not raw and "bfloat16" in dtypes:
        prelude += bf16_helpers(d)
    return prelude


def placeholders(d: Dialect, dt: DType) -> dict[str, str]:
    """What an expression may name besides its inputs: ``{T}`` the compute type, ``{t}`` its
    portable name (helper suffixes), ``{W}`` the wrapping type, ``{bits}`` the storage width."""
    return {"T": d.types[dt.compute], "t": dt.compute, "W": d.types[dt.wrap or dt.compute],
            "bits": str(dt.bits)}


# -- elementwise --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A rendered kernel: its program source, its name, and its argument letters (``b``
    buffer, ``l`` 64-bit int, ``L`` 64-bit unsigned, ``d`` double: the ``_C.Kernel``
    signature)."""

    source: str
    name: str
    signature: str


INPUT_NAMES = "abc"


def render_elementwise(dialect: Dialect, name: str, expression: str, out_dtype: str,
                       in_dtypes: tuple[str, ...], rank: int, raw: bool = False,
                       constants: int = 0, helpers: str = "", float_constants: int = 0,
                       float_type: str = "f64", result: str | None = None) -> Rendered:
    """A kernel ``out[i] = expression(inputs[i])`` over ``n`` elements.

    ``expression`` names the inputs ``{a}``, ``{b}``, ``{c}`` (each loaded once, in its own
    compute type) and the :func:`placeholders` of the first input (of the output when there
    is none); its value is converted to the output's dtype as PyTorch casts. ``rank`` 0 means
    every operand is contiguous from its offset; otherwise the iteration shape has ``rank``
    dimensions and each operand its own strides (elements), so views, broadcasts (stride 0)
    and transposes need no copies. ``raw``: operands are moved as unsigned words of their
    size (copies between one dtype, fills, selections). ``constants``: that many 64-bit
    unsigned arguments ``c0``... the expression may use (a fill's bits); ``float_constants``
    that many floating arguments ``d0``... of ``float_type`` (``f64``, or ``f32`` on a device
    without double precision). ``helpers``: source of functions the expression
    calls, put before the kernel. ``{A}`` in the expression is ``float_type``. ``result``:
    the dtype whose compute type the expression yields, when not the first input's (``bool``
    for a comparison).

    Arguments: out, inputs (buffers); n; each operand's offset; the ``rank`` sizes; each
    operand's ``rank`` strides; the constants; the float constants.
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
    params += [f"{t[float_type]} d{k}" for k in range(float_constants)]

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

    names = {}
    for k, dt in enumerate(ins):
        var = INPUT_NAMES[k]
        names[var] = var
        if raw:
            body.append(f"  const {t[dt.raw]} {var} = in{k}[{index[f'in{k}']}];")
        else:
            body.append(f"  const {t[dt.compute]} {var} = "
                        f"{load(dialect, dt, f'in{k}', index[f'in{k}'])};")
    first = ins[0] if ins else out_t
    # {A}: the widest float type the device has (double, else float), for expressions whose
    # intermediate products must not overflow float
    value = expression.format(**names, **placeholders(dialect, first), A=t[float_type])
    if raw:
        body.append(f"  out[{index['out']}] = {value};")
    else:
        yields = DTYPES[result] if result else first
        body.append("  " + store(dialect, out_t, "out", index["out"],
                                 convert(dialect, yields, out_t, value)))

    kernel_name = f"plait_{name}_{out_dtype}" + "".join(f"_{x}" for x in in_dtypes) + f"_r{rank}"
    prelude = prelude_for(dialect, (out_dtype, *in_dtypes), raw)
    wide = float_constants or "{A}" in expression
    if wide and float_type == "f64" and not NEEDS_FP64 & {out_dtype, *in_dtypes}:
        prelude += dialect.fp64_prelude
    source = (f"{prelude}{helpers}{dialect.kernel} {kernel_name}(\n    " + ",\n    ".join(params)
              + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "b" * len(operands) + "l" * (1 + len(operands) + rank * (1 + len(operands)))
    letter = "d" if float_type == "f64" else "f"
    return Rendered(source, kernel_name, signature + "L" * constants + letter * float_constants)


# the vector width of a vector elementwise kernel, by dtype (two AVX2 registers' worth)
VECTOR_WIDTHS = {"float32": 16, "float64": 8}


def render_elementwise_vector(dialect: Dialect, name: str, expression: str, dtype: str,
                              arity: int) -> Rendered:
    """``out = expression(inputs)`` over contiguous operands of one floating ``dtype``, each
    work item on :data:`VECTOR_WIDTHS` consecutive elements as one OpenCL vector (``vload``,
    the expression on vectors, ``vstore``); the last item's partial run element by element.

    For CPU devices under OpenCL: PoCL vectorises the one-element kernel across work items,
    but with a bounds check and 64-bit index lanes per element, at 0.3-0.4 of the CPU
    backend's throughput on a 4M-element add or exp here; as vectors, 1.0-1.2. Only for
    expressions that are the same on vectors (arithmetic and built-in functions of the
    inputs; no comparisons, selects or helper functions). OpenCL C only.

    Arguments (as the contiguous :func:`render_elementwise` kernel): out, inputs (buffers); n;
    each operand's offset; n and the offsets are one ``long4``/``long8`` argument (the
    signature's parenthesised group: the launch passes them one by one, and the runtime packs
    them), as PoCL copies each argument at every enqueue. Launch: ceil(n / width) work items.
    """
    if dialect.name != "opencl":
        raise ValueError(f"vector elementwise kernels are OpenCL C only, not {dialect.name}")
    t = dialect.types
    dt = DTYPES[dtype]
    scalar = t[dt.compute]
    width = VECTOR_WIDTHS[dtype]
    vector = f"{scalar}{width}"
    operands = ["out"] + [f"in{k}" for k in range(arity)]
    params = [dialect.pointer.format(T=scalar) + f" {p}" for p in operands]
    counts = ["n", *(f"off_{p}" for p in operands)]
    lanes = 4 if len(counts) <= 4 else 8
    params.append(f"{t['i64']}{lanes} counts")
    names = {INPUT_NAMES[k]: INPUT_NAMES[k] for k in range(arity)}
    value = expression.format(**names, **placeholders(dialect, dt))
    body = [f"  const {t['i64']} {name} = counts.s{k};" for k, name in enumerate(counts)]
    body += [f"  const {t['i64']} base = {dialect.global_index} * {width};",
            f"  if (base + {width} <= n) {{"]
    body += [f"    const {vector} {INPUT_NAMES[k]} = vload{width}(0, in{k} + off_in{k} + base);"
             for k in range(arity)]
    body += [f"    vstore{width}({value}, 0, out + off_out + base);", "    return;", "  }",
             f"  for ({t['i64']} e = base; e < n; ++e) {{"]
    body += [f"    const {scalar} {INPUT_NAMES[k]} = in{k}[off_in{k} + e];" for k in range(arity)]
    body += [f"    out[off_out + e] = {value};", "  }"]
    kernel_name = f"plait_{name}_{dtype}_v{width}"
    source = (prelude_for(dialect, (dtype,)) + f"{dialect.kernel} {kernel_name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    return Rendered(source, kernel_name, "b" * len(operands) + "(" + "l" * len(counts) + ")")
