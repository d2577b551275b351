"""The elementwise primitives as rows of expressions, one per dtype kind.

Each :class:`Op` row says what a primitive computes for floating dtypes (in their compute
type: float for float16/bfloat16/float32, double for float64), for integers and for bool, in
the placeholders of :func:`.render.render_elementwise` (``{a}``, ``{b}``, ``{c}`` the inputs;
``{T}`` the compute type, ``{t}`` its portable name, ``{W}`` the wrapping unsigned type,
``{bits}`` the width; ``{A}`` the widest float type of the device). A row with no expression
for a kind does not run that kind (the CPU fallback serves it). Functions the expressions
call are in :data:`HELPERS`, rendered per compute type, so the same row gives OpenCL C and
CUDA C++.

Choices where PyTorch leaves a device free: integer division and remainder by zero give 0 (no
trap: PyTorch's CPU raises, its CUDA kernels give an unspecified value), and the minimum
integer divided by -1 wraps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import render, render_complex
from .render import Dialect, literal


@dataclass(frozen=True)
class Op:
    """One elementwise primitive.

    :param float: the expression for floating dtypes.
    :param int: for signed integers (and unsigned ones and bool unless overridden).
    :param uint: for uint8 (and bool unless ``bool`` is given).
    :param bool: for bool.
    :param raw16: for float16/bfloat16 on their raw 16-bit words (``nextafter``, whose step
        is one unit of the dtype's own precision); ``{mask}`` is the exponent mask and
        ``{qnan}`` a quiet NaN.
    :param complex: for complex64/complex128 (pairs, real part ``.x``, imaginary ``.y``).
    :param helpers: names in :data:`HELPERS` the expressions call.
    :param writes_bool: the output is bool whatever the inputs are (compare, ``isnan``).
    """

    float: str | None = None
    int: str | None = None
    uint: str | None = None
    bool: str | None = None
    raw16: str | None = None
    complex: str | None = None
    helpers: tuple[str, ...] = ()
    writes_bool: bool = False

    def expression(self, dtype: str) -> tuple[str | None, bool]:
        """``(expression, raw)`` for inputs of ``dtype`` (``None``: not rendered)."""
        dt = render.DTYPES[dtype]
        if dt.codec and self.raw16 is not None:
            mask, qnan = RAW16[dt.codec]
            return self.raw16.replace("{mask}", mask).replace("{qnan}", qnan), True
        if dt.is_float:
            return self.float, False
        if dt.is_bool and self.bool is not None:
            return self.bool, False
        if not dt.is_signed and not dt.is_float and self.uint is not None:
            return self.uint, False
        if dtype in render.COMPLEX:
            return self.complex, False
        return self.int, False


RAW16 = {"f16": ("0x7c00", "0x7e00"), "bf16": ("0x7f80", "0x7fc0")}

# The rows whose float expression means the same on OpenCL vectors (arithmetic and built-in
# functions of the inputs, no comparison, select or helper): the vector kernels of
# render.render_elementwise_vector run them on CPU devices. Keyed as kernels name them
# (div by its rounding mode). Not sin/cos/tan: PoCL's 16-wide float versions missed the
# conformance suite's special values by far (0.008 for a subnormal's sine).
VECTOR_SAFE = frozenset({
    "neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "erfc", "lgamma", "rsqrt", "reciprocal", "floor", "ceil", "round", "trunc", "add", "sub",
    "mul", "pow", "fmax", "fmin", "atan2", "hypot", "copysign", "div.None",
})


def _math(function: str) -> Op:
    """A floating function of the C library, the same name in every dialect; complex values
    take the pair function of :mod:`.render_complex` of that name, where there is one."""
    pair = f"c{function}"
    return Op(float=f"{function}({{a}})",
              complex=f"plait_{pair}_{{t}}({{a}})" if pair in render_complex.FUNCTIONS else None)


def _pair(function: str, arity: int = 1) -> str:
    """A call of :mod:`.render_complex`'s ``function`` on the inputs."""
    return f"plait_{function}_{{t}}(" + ", ".join(f"{{{v}}}" for v in "ab"[:arity]) + ")"


def _wrapping(operator: str) -> str:
    # integer arithmetic in the unsigned wrap type: overflow wraps instead of being undefined
    return f"({{T}})(({{W}}){{a}} {operator} ({{W}}){{b}})"


# The C library functions float and double share, spelled alike in OpenCL C and CUDA C++.
_LIBRARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
            "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
            "erfc", "lgamma")

_SAME = "{a}"  # rounding an integer changes nothing

UNARY: dict[str, Op] = {
    "neg": Op(float="-{a}", int="({T})(({W})0 - ({W}){a})", complex="plait_cneg_{t}({a})",
              helpers=("complex",)),
    # complex: |z| with a zero imaginary part (core keeps the real parts)
    "abs": Op(float="fabs({a})", int="({a} < 0 ? ({T})(({W})0 - ({W}){a}) : {a})", uint=_SAME,
              complex=_pair("cabs")),
    # NaN and -0.0 give 0, as (0 < x) - (x < 0) does
    "sign": Op(float="({T})({a} > 0) - ({T})({a} < 0)", int="({T})(({a} > 0) - ({a} < 0))",
               complex=_pair("csgn")),  # complex: sgn, z / |z| (0 at 0)
    **{name: _math(name) for name in _LIBRARY},
    # not rsqrt(): that one may be 2 ulp off
    "rsqrt": Op(float="({T})1 / sqrt({a})", complex=_pair("crsqrt")),
    "reciprocal": Op(float="({T})1 / {a}", complex=_pair("crecip")),
    "sigmoid": Op(float="plait_sigmoid_{t}({a})", helpers=("sigmoid",),
                  complex=_pair("csigmoid")),
    "erfinv": Op(float="plait_erfinv_{t}({a})", helpers=("erfinv",)),
    "digamma": Op(float="plait_digamma_{t}({a})", helpers=("digamma",)),
    "floor": Op(float="floor({a})", int=_SAME),
    "ceil": Op(float="ceil({a})", int=_SAME),
    "round": Op(float="rint({a})", int=_SAME),  # half to even
    "trunc": Op(float="trunc({a})", int=_SAME),
    "logical_not": Op(float="{a} == 0", int="{a} == 0", writes_bool=True,
                      complex="({a}.x == 0 && {a}.y == 0)"),
    "bitwise_not": Op(int="~{a}", bool="!{a}"),
    "isnan": Op(float="isnan({a})", int="0", writes_bool=True,
                complex="(isnan({a}.x) || isnan({a}.y))"),
}

# NaN propagates through maximum/minimum (x != x holds for NaN only)
_MAXIMUM = "({a} != {a}) ? {a} : (({b} != {b}) ? {b} : ({a} > {b} ? {a} : {b}))"
_MINIMUM = "({a} != {a}) ? {a} : (({b} != {b}) ? {b} : ({a} < {b} ? {a} : {b}))"

BINARY: dict[str, Op] = {
    "add": Op(float="{a} + {b}", int=_wrapping("+"), complex="plait_cadd_{t}({a}, {b})",
              helpers=("complex",)),
    "sub": Op(float="{a} - {b}", int=_wrapping("-"), complex="plait_csub_{t}({a}, {b})",
              helpers=("complex",)),
    "mul": Op(float="{a} * {b}", int=_wrapping("*"), complex="plait_cmul_{t}({a}, {b})",
              helpers=("complex",)),
    "pow": Op(float="pow({a}, {b})", int="plait_ipow_{t}({a}, {b})", helpers=("ipow",),
              complex=_pair("cpow", 2)),
    "maximum": Op(float=_MAXIMUM, int=_MAXIMUM),
    "minimum": Op(float=_MINIMUM, int=_MINIMUM),
    "fmax": Op(float="fmax({a}, {b})", int="({a} > {b} ? {a} : {b})"),
    "fmin": Op(float="fmin({a}, {b})", int="({a} < {b} ? {a} : {b})"),
    "atan2": Op(float="atan2({a}, {b})"),
    "hypot": Op(float="hypot({a}, {b})"),
    "copysign": Op(float="copysign({a}, {b})"),
    "nextafter": Op(float="nextafter({a}, {b})",
                    raw16="plait_nextafter16({a}, {b}, {mask}, {qnan})",
                    helpers=("nextafter16",)),
    "remainder": Op(float="plait_remainder_{t}({a}, {b})", int="plait_iremainder_{t}({a}, {b})",
                    helpers=("remainder", "iremainder")),
    "fmod": Op(float="fmod({a}, {b})",
               int="(({b} == 0 || {b} == -1) ? ({T})0 : ({T})({a} % {b}))",
               uint="({b} == 0 ? ({T})0 : ({T})({a} % {b}))"),
    # in double where the device has it, as core computes them: g * ((1 - y) * y) overflows
    # float for huge y where the double product times g = 0 is 0
    "sigmoid_backward": Op(float="({T})(({A}){a} * ((({A})1 - ({A}){b}) * ({A}){b}))",
                           complex=_pair("csigmoid_backward", 2)),
    # (1 - y)(1 + y): no cancellation near |y| = 1
    "tanh_backward": Op(float="({T})(({A}){a} * ((({A})1 - ({A}){b}) * (({A})1 + ({A}){b})))",
                        complex=_pair("ctanh_backward", 2)),
    "bitwise_and": Op(int="{a} & {b}"),
    "bitwise_or": Op(int="{a} | {b}"),
    "bitwise_xor": Op(int="{a} ^ {b}"),
    # shifts by a negative amount or by the width or more give 0 (left), or the sign (right)
    "bitwise_left_shift": Op(
        int="(({b} < 0 || {b} >= {bits}) ? ({T})0 : ({T})(({W}){a} << {b}))"),
    "bitwise_right_shift": Op(
        int="(({b} < 0 || {b} >= {bits} - 1) ? ({T})({a} >> ({bits} - 1)) : ({T})({a} >> {b}))",
        uint="({b} >= {bits} ? ({T})0 : ({T})({a} >> {b}))"),
}

# div's rounding modes: None (true division, floats only: core promotes integers first)
DIV: dict[str | None, Op] = {
    None: Op(float="{a} / {b}", complex="plait_cdiv_{t}({a}, {b})", helpers=("complex",)),
    "trunc": Op(float="trunc({a} / {b})", int="plait_idiv_{t}({a}, {b})", helpers=("idiv",)),
    "floor": Op(float="plait_floordiv_{t}({a}, {b})", int="plait_ifloordiv_{t}({a}, {b})",
                helpers=("floordiv", "idiv", "ifloordiv")),
}

_COMPLEX_EQ = "(({a}).x == ({b}).x && ({a}).y == ({b}).y)"


def _lexicographic(sym: str) -> str:
    # complex values order by real part, then imaginary part, as numpy (the reference)
    # orders them; core compares magnitudes so (isclose), whose imaginary parts are 0
    strict = sym.rstrip("=")
    return (f"(({{a}}).x {strict} ({{b}}).x"
            f" || (({{a}}).x == ({{b}}).x && ({{a}}).y {sym} ({{b}}).y))")


_COMPLEX_COMPARE = {"eq": _COMPLEX_EQ, "ne": f"!{_COMPLEX_EQ}",
                    **{name: _lexicographic(sym) for name, sym in
                       (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="))}}
_TRUTH = {"a": "(({a}).x != 0 || ({a}).y != 0)", "b": "(({b}).x != 0 || ({b}).y != 0)"}

COMPARE: dict[str, Op] = {
    **{name: Op(float=f"{{a}} {sym} {{b}}", int=f"{{a}} {sym} {{b}}", writes_bool=True,
                complex=_COMPLEX_COMPARE[name])
       for name, sym in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                         ("ge", ">="))},
    "logical_and": Op(float="({a} != 0) && ({b} != 0)", int="({a} != 0) && ({b} != 0)",
                      writes_bool=True, complex=f"{_TRUTH['a']} && {_TRUTH['b']}"),
    "logical_or": Op(float="({a} != 0) || ({b} != 0)", int="({a} != 0) || ({b} != 0)",
                     writes_bool=True, complex=f"{_TRUTH['a']} || {_TRUTH['b']}"),
    "logical_xor": Op(float="({a} != 0) != ({b} != 0)", int="({a} != 0) != ({b} != 0)",
                      writes_bool=True, complex=f"{_TRUTH['a']} != {_TRUTH['b']}"),
}

# where(out, condition, a, b) is a selection of raw words: every dtype, complex included
WHERE = "{a} ? {b} : {c}"

ROWS: dict[str, Op] = {**UNARY, **BINARY, **COMPARE}


def supports(op: str, dtype: str) -> bool:
    """Whether the tables render ``op`` (``div``: true division) on inputs of ``dtype``."""
    row = DIV[None] if op == "div" else ROWS.get(op)
    return row is not None and row.expression(dtype)[0] is not None


# -- helpers ----------------------------------------------------------------------------------
# Each renders one function for one compute type (portable name ``t``) in a dialect.


def _sigmoid(d: Dialect, t: str) -> str:
    # e = e^-|x| never overflows: 1 / (1 + e) above 0, e / (1 + e) below
    T = d.types[t]
    return (f"{d.function} {T} plait_sigmoid_{t}({T} x) {{\n"
            f"  const {T} e = exp(-fabs(x));\n"
            f"  return (x < 0 ? e : ({T})1) / (({T})1 + e);\n}}\n")


# Giles' single-precision approximation of erf^-1 (central and tail polynomials), refined by
# Newton steps on erf: two reach double precision from its 1e-7.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _horner(coefficients: tuple[float, ...], x: str, t: str) -> str:
    text = literal(coefficients[0], t)
    for c in coefficients[1:]:
        text = f"({text}) * {x} + {literal(c, t)}"
    return text


def _erfinv(d: Dialect, t: str) -> str:
    T = d.types[t]
    return (f"{d.function} {T} plait_erfinv_{t}({T} y) {{\n"
            f"  if (!(y >= -1 && y <= 1)) return NAN;\n"
            f"  if (y == 1) return INFINITY;\n  if (y == -1) return -INFINITY;\n"
            f"  {T} w = -log((({T})1 - y) * (({T})1 + y));\n  {T} p;\n"
            f"  if (w < 5) {{ w = w - {literal(2.5, t)}; p = "
            f"{_horner(_ERFINV_CENTRAL, 'w', t)}; }}\n"
            f"  else {{ w = sqrt(w) - 3; p = {_horner(_ERFINV_TAIL, 'w', t)}; }}\n"
            f"  {T} x = p * y;\n"
            f"  for (int k = 0; k < 2; ++k) {{\n"
            f"    const {T} step = (erf(x) - y) / "
            f"({literal(_TWO_OVER_SQRT_PI, t)} * exp(-x * x));\n"
            f"    if (step == step && fabs(step) != INFINITY) x -= step;\n  }}\n"
            f"  return x;\n}}\n")


# Bernoulli numbers B2k / (2k) of digamma's asymptotic series
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma(d: Dialect, t: str) -> str:
    # reflection below 0, the recurrence up to 10, then the asymptotic series
    T = d.types[t]
    series = "".join(f"  s = (s + {literal(c, t)}) * inv2;\n" for c in reversed(_DIGAMMA_SERIES))
    pi = literal(3.141592653589793, t)
    return (f"{d.function} {T} plait_digamma_{t}({T} x) {{\n"
            f"  if (x == 0) return signbit(x) ? INFINITY : -INFINITY;\n"
            f"  if (x < 0 && x == floor(x)) return NAN;\n"
            f"  {T} result = 0;\n"
            f"  if (x < 0) {{ result = -{pi} / tan({pi} * x); x = 1 - x; }}\n"
            f"  while (x < 10) {{ result -= ({T})1 / x; x += 1; }}\n"
            f"  if (x == INFINITY) return INFINITY;\n"
            f"  const {T} inv2 = ({T})1 / (x * x);\n  {T} s = 0;\n{series}"
            f"  return result + log(x) - {literal(0.5, t)} / x - s;\n}}\n")


def _remainder(d: Dialect, t: str) -> str:
    # Python's modulo: the sign of the divisor (fmod corrected by one divisor)
    T = d.types[t]
    return (f"{d.function} {T} plait_remainder_{t}({T} a, {T} b) {{\n"
            f"  const {T} m = fmod(a, b);\n"
            f"  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;\n}}\n")


def _floordiv(d: Dialect, t: str) -> str:
    # Python's float floor division, exact where floor(a / b) is not
    T = d.types[t]
    return (f"{d.function} {T} plait_floordiv_{t}({T} a, {T} b) {{\n"
            f"  if (b == 0) return a / b;\n"
            f"  const {T} m = fmod(a, b);\n  {T} q = (a - m) / b;\n"
            f"  if (m != 0 && ((b < 0) != (m < 0))) q -= 1;\n"
            f"  if (q == 0) return copysign(({T})0, a / b);\n"
            f"  {T} f = floor(q);\n  if (q - f > {literal(0.5, t)}) f += 1;\n"
            f"  return f;\n}}\n")


def _ipow(d: Dialect, t: str) -> str:
    # repeated squaring in the wrapping type; a negative exponent gives 1 / a**|b| truncated
    T, W = d.types[t], d.types[render.DTYPES[_INT_DTYPE[t]].wrap]
    return (f"{d.function} {T} plait_ipow_{t}({T} a, {T} b) {{\n"
            f"  if (b < 0) return a == 1 ? ({T})1 : (a == ({T})-1 ? ((b & 1) ? ({T})-1 : ({T})1)"
            f" : ({T})0);\n"
            f"  {W} result = 1, base = ({W})a;\n"
            f"  while (b) {{ if (b & 1) result *= base; base *= base; b >>= 1; }}\n"
            f"  return ({T})result;\n}}\n")


def _idiv(d: Dialect, t: str) -> str:
    T, W = d.types[t], d.types[render.DTYPES[_INT_DTYPE[t]].wrap]
    minus_one = "" if t == "u8" else f"  if (b == -1) return ({T})(({W})0 - ({W})a);\n"
    return (f"{d.function} {T} plait_idiv_{t}({T} a, {T} b) {{\n"
            f"  if (b == 0) return 0;\n{minus_one}"
            f"  return ({T})(a / b);\n}}\n")


def _not_minus_one(t: str) -> str:
    # x % -1 and MIN / -1 trap on some devices; unsigned types have no -1
    return "" if t == "u8" else "b != -1 && "


def _or_minus_one(t: str) -> str:
    return "" if t == "u8" else " || b == -1"


def _ifloordiv(d: Dialect, t: str) -> str:
    T = d.types[t]
    return (f"{d.function} {T} plait_ifloordiv_{t}({T} a, {T} b) {{\n"
            f"  {T} q = plait_idiv_{t}(a, b);\n"
            f"  if (b != 0 && {_not_minus_one(t)}a % b != 0 && ((a < 0) != (b < 0))) q -= 1;\n"
            f"  return q;\n}}\n")


def _iremainder(d: Dialect, t: str) -> str:
    T = d.types[t]
    return (f"{d.function} {T} plait_iremainder_{t}({T} a, {T} b) {{\n"
            f"  const {T} r = (b == 0{_or_minus_one(t)}) ? ({T})0 : ({T})(a % b);\n"
            f"  return (r != 0 && ((r < 0) != (b < 0))) ? ({T})(r + b) : r;\n}}\n")


def _nextafter16(d: Dialect, t: str) -> str:
    # on the 16-bit patterns: sign-magnitude order, as integers
    U = d.types["u16"]
    return (f"{d.function} int plait_key16({U} x) {{\n"
            f"  return (x & 0x8000) ? -(int)(x & 0x7fff) : (int)x;\n}}\n"
            f"{d.function} {U} plait_nextafter16({U} a, {U} b, int mask, int qnan) {{\n"
            f"  if ((a & 0x7fff) > mask || (b & 0x7fff) > mask) return ({U})qnan;\n"
            f"  const int ka = plait_key16(a), kb = plait_key16(b);\n"
            f"  if (ka == kb) return b;\n"
            f"  if ((a & 0x7fff) == 0) return ({U})(kb < 0 ? 0x8001 : 0x0001);\n"
            f"  return ({U})(((ka < kb) == (ka > 0)) ? a + 1 : a - 1);\n}}\n")


def _complex(d: Dialect, t: str) -> str:
    """Complex negation, sum, difference, product, and quotient (Smith's: no overflow in
    |b|^2), on pairs, spelled the same in every dialect (:mod:`.render_complex`)."""
    return render_complex.source(d, t, ("cneg", "cadd", "csub", "cmul", "cdiv"))


# compute type -> an integer dtype of it (for its wrapping type)
_INT_DTYPE = {"u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}

HELPERS: dict[str, Callable[[Dialect, str], str]] = {
    "sigmoid": _sigmoid, "erfinv": _erfinv, "digamma": _digamma, "remainder": _remainder,
    "floordiv": _floordiv, "ipow": _ipow, "idiv": _idiv, "ifloordiv": _ifloordiv,
    "iremainder": _iremainder, "nextafter16": _nextafter16, "complex": _complex,
}

# helpers that only make sense for one kind of compute type
_FLOAT_HELPERS = frozenset({"sigmoid", "erfinv", "digamma", "remainder", "floordiv"})
_INT_HELPERS = frozenset({"ipow", "idiv", "ifloordiv", "iremainder"})


def helpers_source(d: Dialect, op: Op, dtype: str) -> str:
    """The helper functions ``op``'s expression for ``dtype`` calls, rendered."""
    dt = render.DTYPES[dtype]
    if dtype in render.COMPLEX:  # the pair functions its expression calls
        return render_complex.source_for(d, dt.compute, op.complex or "")
    wanted = _FLOAT_HELPERS if dt.is_float else _INT_HELPERS
    out = []
    for name in op.helpers:
        if name == "nextafter16":
            if dt.codec:
                out.append(_nextafter16(d, "u16"))
        elif name in wanted:
            out.append(HELPERS[name](d, dt.compute))
    return "".join(out)
