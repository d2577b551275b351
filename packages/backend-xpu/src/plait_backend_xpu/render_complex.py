"""Complex arithmetic and math on value pairs (``float2``/``double2``), rendered per dialect.

A complex value is a pair, real part ``.x`` and imaginary part ``.y``, built by the dialect's
:attr:`~.render.Dialect.pair`; every function here is written once over the pair's part type
and spelled the same in OpenCL C and CUDA C++. :data:`FUNCTIONS` maps a name to the names it
calls and its renderer; :func:`source` renders the ones asked for with what they call, callees
first. Kernels name a function ``plait_<name>_<t>`` (``t``: ``c64`` or ``c128``), and
:func:`source_for` finds those names in a kernel's expression.

The formulas keep the parts accurate where the obvious ones cancel or overflow: Smith's
quotient (no ``|b|^2``), ``expm1`` through ``2 sin^2(y/2)``, ``log1p`` through ``log1p`` of
``|1 + z|^2 - 1`` near 0, Kahan's ``tanh`` (``tan``/``sinh``/``sqrt``, the limit for large
``|x|``), and the inverse functions from square roots of ``1 - z`` and ``1 + z`` (Kahan's
"branch cuts for complex elementary functions"), whose signed zeros put the cuts where C99
and numpy put them. ``pow`` follows numpy: ``z ** 0`` is 1, ``0 ** w`` is 0 for a positive
real ``w`` and NaN otherwise, integer exponents below 100 by repeated squaring, the others
as ``exp(w log z)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import render
from .render import Dialect, literal

_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046
_HALF_PI = 1.5707963267948966


@dataclass(frozen=True)
class _Context:
    """What a function's renderer needs: the pair type ``T``, its part ``R``, the suffix
    ``t``, the dialect."""

    d: Dialect
    t: str

    @property
    def T(self) -> str:  # the type's spelling, as in the sources
        return self.d.types[self.t]

    @property
    def R(self) -> str:
        return self.d.types[render.PART[self.t]]

    def pair(self, x: str, y: str) -> str:
        return self.d.pair.format(T=self.T, x=x, y=y)

    def lit(self, value: float) -> str:
        return literal(value, render.PART[self.t])

    def call(self, name: str, *args: str) -> str:
        return f"plait_{name}_{self.t}({', '.join(args)})"

    def define(self, name: str, params: str, body: str, returns: str | None = None) -> str:
        """A function ``plait_<name>_<t>(params)`` returning ``returns`` (the pair type)."""
        head = f"{self.d.function} {returns or self.T} plait_{name}_{self.t}({params})"
        return f"{head} {{\n{body}}}\n"


def _one(c: _Context) -> str:
    return c.pair(c.lit(1.0), c.lit(0.0))


def _arith(name: str) -> Callable[[_Context], str]:
    values = {"cneg": ("a", ("-a.x", "-a.y")), "cadd": ("a, b", ("a.x + b.x", "a.y + b.y")),
              "csub": ("a, b", ("a.x - b.x", "a.y - b.y")),
              "cmul": ("a, b", ("a.x * b.x - a.y * b.y", "a.x * b.y + a.y * b.x")),
              "cconj": ("a", ("a.x", "-a.y"))}
    args, (x, y) = values[name]

    def render_it(c: _Context) -> str:
        params = ", ".join(f"{c.T} {v}" for v in args.split(", "))
        return c.define(name, params, f"  return {c.pair(x, y)};\n")

    return render_it


def _cdiv(c: _Context) -> str:
    # Smith's quotient: divide by the larger part of b, so |b|^2 never overflows
    return c.define("cdiv", f"{c.T} a, {c.T} b", (
        f"  if (fabs(b.x) >= fabs(b.y)) {{\n"
        f"    const {c.R} r = b.y / b.x, den = b.x + b.y * r;\n"
        f"    return {c.pair('(a.x + a.y * r) / den', '(a.y - a.x * r) / den')};\n  }}\n"
        f"  const {c.R} r = b.x / b.y, den = b.x * r + b.y;\n"
        f"  return {c.pair('(a.x * r + a.y) / den', '(a.y * r - a.x) / den')};\n"))


def _crecip(c: _Context) -> str:
    return c.define("crecip", f"{c.T} a", f"  return {c.call('cdiv', _one(c), 'a')};\n")


def _cabs(c: _Context) -> str:
    # |z| in the complex dtype (imaginary part 0), as the abs primitive writes it
    return c.define("cabs", f"{c.T} a", f"  return {c.pair('hypot(a.x, a.y)', c.lit(0.0))};\n")


def _csgn(c: _Context) -> str:
    return c.define("csgn", f"{c.T} a", (
        f"  const {c.R} r = hypot(a.x, a.y);\n"
        f"  if (r == 0) return {c.pair(c.lit(0.0), c.lit(0.0))};\n"
        f"  return {c.pair('a.x / r', 'a.y / r')};\n"))


def _cexp(c: _Context) -> str:
    # a real argument keeps its imaginary zero (exp(inf) * sin(0) would be NaN); where e^x
    # overflows but e^x cos y may not, the factor goes in two halves
    return c.define("cexp", f"{c.T} a", (
        f"  if (a.y == 0) return {c.pair('exp(a.x)', 'a.y')};\n"
        f"  const {c.R} e = exp(a.x), cy = cos(a.y), sy = sin(a.y);\n"
        f"  if (isinf(e) && !isinf(a.x)) {{\n"
        f"    const {c.R} h = exp({c.lit(0.5)} * a.x);\n"
        f"    return {c.pair('(h * cy) * h', '(h * sy) * h')};\n  }}\n"
        f"  return {c.pair('e * cy', 'e * sy')};\n"))


def _cexp2(c: _Context) -> str:
    ln2 = c.lit(_LN2)
    return c.define("cexp2", f"{c.T} a",
                    f"  return {c.call('cexp', c.pair(f'a.x * {ln2}', f'a.y * {ln2}'))};\n")


def _cexpm1(c: _Context) -> str:
    # Re(e^z - 1) = expm1(x) cos y - 2 sin^2(y / 2): no cancellation near 0
    return c.define("cexpm1", f"{c.T} a", (
        f"  const {c.R} s = sin({c.lit(0.5)} * a.y);\n"
        f"  return {c.pair('expm1(a.x) * cos(a.y) - 2 * s * s', 'exp(a.x) * sin(a.y)')};\n"))


def _clog(c: _Context) -> str:
    return c.define("clog", f"{c.T} a",
                    f"  return {c.pair('log(hypot(a.x, a.y))', 'atan2(a.y, a.x)')};\n")


def _scaled_log(name: str, factor: float) -> Callable[[_Context], str]:
    def render_it(c: _Context) -> str:
        f = c.lit(factor)
        return c.define(name, f"{c.T} a", (f"  const {c.T} l = {c.call('clog', 'a')};\n"
                                           f"  return {c.pair(f'l.x * {f}', f'l.y * {f}')};\n"))

    return render_it


def _clog1p(c: _Context) -> str:
    # log|1 + z| = log1p(2x + x^2 + y^2) / 2 near 0, where |1 + z| rounds to 1
    return c.define("clog1p", f"{c.T} a", (
        f"  const {c.R} im = atan2(a.y, 1 + a.x);\n"
        f"  if (fabs(a.x) < {c.lit(0.5)} && fabs(a.y) < {c.lit(0.5)})\n"
        f"    return {c.pair(f'{c.lit(0.5)} * log1p(a.x * (2 + a.x) + a.y * a.y)', 'im')};\n"
        f"  return {c.pair('log(hypot(1 + a.x, a.y))', 'im')};\n"))


def _csqrt(c: _Context) -> str:
    # the root with a non-negative real part; halves summed before the root (no overflow);
    # the imaginary part keeps y's sign, signed zero included (the cut along x < 0)
    zero = c.lit(0.0)
    return c.define("csqrt", f"{c.T} a", (
        f"  if (a.x == 0 && a.y == 0) return {c.pair(zero, 'a.y')};\n"
        f"  if (isinf(a.y)) return {c.pair('INFINITY', 'a.y')};\n"
        f"  const {c.R} t = sqrt({c.lit(0.5)} * fabs(a.x) + {c.lit(0.5)} * hypot(a.x, a.y));\n"
        f"  if (a.x >= 0) return {c.pair('t', 'a.y / (2 * t)')};\n"
        f"  return {c.pair('fabs(a.y) / (2 * t)', 'copysign(t, a.y)')};\n"))


def _crsqrt(c: _Context) -> str:
    return c.define("crsqrt", f"{c.T} a",
                    f"  return {c.call('cdiv', _one(c), c.call('csqrt', 'a'))};\n")


def _trig(name: str, x: str, y: str) -> Callable[[_Context], str]:
    def render_it(c: _Context) -> str:
        return c.define(name, f"{c.T} a", f"  return {c.pair(x, y)};\n")

    return render_it


# |x| beyond which tanh(x) is +-1 in the part type and e^-2|x| carries the imaginary part
_TANH_LIMIT = {"c64": 9.0, "c128": 22.0}


def _ctanh(c: _Context) -> str:
    # Kahan: t = tan y, s = sinh x, rho = sqrt(1 + s^2):
    # tanh z = (rho s (1 + t^2) + i t) / (1 + (1 + t^2) s^2)
    return c.define("ctanh", f"{c.T} a", (
        f"  if (fabs(a.x) > {c.lit(_TANH_LIMIT[c.t])}) {{\n"
        f"    const {c.R} e = exp(-2 * fabs(a.x));\n"
        f"    return {c.pair(f'copysign({c.lit(1.0)}, a.x)', '4 * sin(a.y) * cos(a.y) * e')};\n"
        f"  }}\n"
        f"  const {c.R} t = tan(a.y), beta = 1 + t * t, s = sinh(a.x);\n"
        f"  const {c.R} rho = sqrt(1 + s * s), den = 1 + beta * s * s;\n"
        f"  return {c.pair('beta * rho * s / den', 't / den')};\n"))


def _rotated(name: str, inner: str) -> Callable[[_Context], str]:
    """``f(z) = -i g(i z)`` for the pair (``tan`` from ``tanh``, ``asinh`` from ``asin``...)."""

    def render_it(c: _Context) -> str:
        return c.define(name, f"{c.T} a", (
            f"  const {c.T} r = {c.call(inner, c.pair('-a.y', 'a.x'))};\n"
            f"  return {c.pair('r.y', '-r.x')};\n"))

    return render_it


def _csigmoid(c: _Context) -> str:
    one = _one(c)
    return c.define("csigmoid", f"{c.T} a", (
        f"  const {c.T} e = {c.call('cexp', c.pair('-a.x', '-a.y'))};\n"
        f"  return {c.call('cdiv', one, c.pair('1 + e.x', 'e.y'))};\n"))


def _roots(c: _Context, first: tuple[str, str], second: tuple[str, str]) -> str:
    """``s1`` and ``s2``: the square roots of two pairs (negations spelled ``-y`` so that a
    signed zero flips with them)."""
    return (f"  const {c.T} s1 = {c.call('csqrt', c.pair(*first))};\n"
            f"  const {c.T} s2 = {c.call('csqrt', c.pair(*second))};\n")


def _casin(c: _Context) -> str:
    # s1 = sqrt(1 - z), s2 = sqrt(1 + z): asin z = atan(x / Re(s1 s2)) + i asinh(Im(conj(s1) s2))
    return c.define("casin", f"{c.T} a", (
        _roots(c, ("1 - a.x", "-a.y"), ("1 + a.x", "a.y"))
        + f"  const {c.R} re = atan2(a.x, s1.x * s2.x - s1.y * s2.y);\n"
        + f"  return {c.pair('re', 'asinh(s1.x * s2.y - s1.y * s2.x)')};\n"))


def _cacos(c: _Context) -> str:
    # acos z = 2 atan(Re s1 / Re s2) + i asinh(Im(conj(s2) s1))
    return c.define("cacos", f"{c.T} a", (
        _roots(c, ("1 - a.x", "-a.y"), ("1 + a.x", "a.y"))
        + f"  return {c.pair('2 * atan2(s1.x, s2.x)', 'asinh(s2.x * s1.y - s2.y * s1.x)')};\n"))


def _cacosh(c: _Context) -> str:
    # s1 = sqrt(z - 1), s2 = sqrt(z + 1): acosh z = asinh(Re(conj(s1) s2)) + 2i atan(Im s1 / Re s2)
    return c.define("cacosh", f"{c.T} a", (
        _roots(c, ("a.x - 1", "a.y"), ("a.x + 1", "a.y"))
        + f"  return {c.pair('asinh(s1.x * s2.x + s1.y * s2.y)', '2 * atan2(s1.y, s2.x)')};\n"))


# |z| beyond which atanh(z) is 1/z's real part and +-pi/2 (x^2 + y^2 would overflow)
_ATANH_LARGE = {"c64": 1e9, "c128": 1e150}


def _catanh(c: _Context) -> str:
    # Re = log(|1 + z|^2 / |1 - z|^2) / 4 = log1p(4x / ((1 - x)^2 + y^2)) / 4 (|x| < 1/2),
    # Im = arg((1 + z)(1 - conj z)) / 2 = atan2(2y, (1 - x)(1 + x) - y^2) / 2
    half_pi = c.lit(_HALF_PI)
    return c.define("catanh", f"{c.T} a", (
        f"  if (fabs(a.x) > {c.lit(_ATANH_LARGE[c.t])} || fabs(a.y) > "
        f"{c.lit(_ATANH_LARGE[c.t])}) {{\n"
        f"    const {c.R} h = hypot(a.x, a.y);\n"
        f"    return {c.pair('(a.x / h) / h', f'copysign({half_pi}, a.y)')};\n  }}\n"
        f"  const {c.R} u = 1 - a.x;\n"
        # near +-1 one of |1 +- z| is small: the difference of two logs loses nothing there
        f"  const {c.R} re = fabs(a.x) < {c.lit(0.5)}\n"
        f"      ? {c.lit(0.25)} * log1p(4 * a.x / (u * u + a.y * a.y))\n"
        f"      : {c.lit(0.5)} * (log(hypot(1 + a.x, a.y)) - log(hypot(u, a.y)));\n"
        f"  return {c.pair('re', f'{c.lit(0.5)} * atan2(2 * a.y, u * (1 + a.x) - a.y * a.y)')};\n"))


def _cpow(c: _Context) -> str:
    one, zero = _one(c), c.pair(c.lit(0.0), c.lit(0.0))
    return c.define("cpow", f"{c.T} a, {c.T} b", (
        f"  if (b.x == 0 && b.y == 0) return {one};\n"
        f"  if (a.x == 0 && a.y == 0)\n"
        f"    return (b.x > 0 && b.y == 0) ? {zero} : {c.pair('NAN', 'NAN')};\n"
        f"  if (b.y == 0 && b.x == rint(b.x) && fabs(b.x) < 100) {{\n"
        f"    int n = (int)b.x, m = n < 0 ? -n : n;\n"
        f"    {c.T} r = {one}, p = a;\n"
        f"    while (m) {{ if (m & 1) r = {c.call('cmul', 'r', 'p')}; m >>= 1; "
        f"if (m) p = {c.call('cmul', 'p', 'p')}; }}\n"
        f"    return n < 0 ? {c.call('cdiv', one, 'r')} : r;\n  }}\n"
        f"  return {c.call('cexp', c.call('cmul', 'b', c.call('clog', 'a')))};\n"))


def _sigmoid_backward(c: _Context) -> str:
    # (1 - y) y
    return c.define("csigmoid_backward", f"{c.T} g, {c.T} y", (
        f"  const {c.T} f = {c.call('cmul', c.pair('1 - y.x', '-y.y'), 'y')};\n"
        f"  return {c.call('cmul', 'g', c.pair('f.x', '-f.y'))};\n"))


def _tanh_backward(c: _Context) -> str:
    # (1 - y)(1 + y): no cancellation near y = +-1
    return c.define("ctanh_backward", f"{c.T} g, {c.T} y", (
        f"  const {c.T} f = "
        f"{c.call('cmul', c.pair('1 - y.x', '-y.y'), c.pair('1 + y.x', 'y.y'))};\n"
        f"  return {c.call('cmul', 'g', c.pair('f.x', '-f.y'))};\n"))


@dataclass(frozen=True)
class Function:
    """A complex function: the functions it calls and its renderer."""

    calls: tuple[str, ...]
    render: Callable[[_Context], str]


FUNCTIONS: dict[str, Function] = {
    **{name: Function((), _arith(name)) for name in ("cneg", "cadd", "csub", "cmul", "cconj")},
    "cdiv": Function((), _cdiv),
    "crecip": Function(("cdiv",), _crecip),
    "cabs": Function((), _cabs),
    "csgn": Function((), _csgn),
    "cexp": Function((), _cexp),
    "cexp2": Function(("cexp",), _cexp2),
    "cexpm1": Function((), _cexpm1),
    "clog": Function((), _clog),
    "clog2": Function(("clog",), _scaled_log("clog2", 1 / _LN2)),
    "clog10": Function(("clog",), _scaled_log("clog10", 1 / _LN10)),
    "clog1p": Function((), _clog1p),
    "csqrt": Function((), _csqrt),
    "crsqrt": Function(("csqrt", "cdiv"), _crsqrt),
    "csin": Function((), _trig("csin", "sin(a.x) * cosh(a.y)", "cos(a.x) * sinh(a.y)")),
    "ccos": Function((), _trig("ccos", "cos(a.x) * cosh(a.y)", "-(sin(a.x) * sinh(a.y))")),
    "csinh": Function((), _trig("csinh", "sinh(a.x) * cos(a.y)", "cosh(a.x) * sin(a.y)")),
    "ccosh": Function((), _trig("ccosh", "cosh(a.x) * cos(a.y)", "sinh(a.x) * sin(a.y)")),
    "ctanh": Function((), _ctanh),
    "ctan": Function(("ctanh",), _rotated("ctan", "ctanh")),
    "csigmoid": Function(("cexp", "cdiv"), _csigmoid),
    "casin": Function(("csqrt",), _casin),
    "cacos": Function(("csqrt",), _cacos),
    "cacosh": Function(("csqrt",), _cacosh),
    "casinh": Function(("casin",), _rotated("casinh", "casin")),
    "catanh": Function((), _catanh),
    "catan": Function(("catanh",), _rotated("catan", "catanh")),
    "cpow": Function(("cmul", "cdiv", "cexp", "clog"), _cpow),
    "csigmoid_backward": Function(("cmul",), _sigmoid_backward),
    "ctanh_backward": Function(("cmul",), _tanh_backward),
}


def _ordered(names: Iterable[str]) -> list[str]:
    """``names`` and everything they call, each once, callees before callers."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        for callee in FUNCTIONS[name].calls:
            visit(callee)
        done.append(name)

    for name in names:
        visit(name)
    return done


def source(d: Dialect, t: str, names: Iterable[str]) -> str:
    """The functions ``names`` (and those they call) for complex compute type ``t``."""
    c = _Context(d, t)
    return "".join(FUNCTIONS[name].render(c) for name in _ordered(names))


_CALL = re.compile(r"\bplait_(c\w+?)_\{t\}")

# functions whose complex64 results are as good in float as in double (a few roundings, no
# function of a function): the others compute complex64 in double where a device has it
EXACT = frozenset({"cneg", "cadd", "csub", "cmul", "cconj", "cdiv", "crecip", "cabs", "csgn"})


def calls(expression: str) -> list[str]:
    """The functions of :data:`FUNCTIONS` an expression calls as ``plait_<name>_{t}``."""
    return [m for m in _CALL.findall(expression) if m in FUNCTIONS]


def source_for(d: Dialect, t: str, expression: str) -> str:
    """The functions an expression written with ``plait_<name>_{t}(...)`` calls."""
    return source(d, t, calls(expression))
