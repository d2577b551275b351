"""Symbolic scalars: ``SymInt``, ``SymFloat``, ``SymBool`` and the expressions behind them.

A symbolic scalar stands for a size (or a float, or a condition) that is not fixed while a
program is traced. It wraps a :class:`SymNode`, a small immutable expression over named
symbols and constants. Every node carries a ``hint``: its concrete value for the values the
symbols had when they were created, computed from the children's hints as the node is built.

Symbolic arithmetic never decides anything. Deciding happens when Python asks for a concrete
value -- ``bool(s0 > 2)`` in an ``if``, ``int(s0)``, ``range(s0)``, ``hash(f0)`` -- and then the
hint answers and the condition is recorded as a :class:`Guard` in the active :class:`ShapeEnv`
(``with shape_env: ...``; the active stack is thread-local). A compiled program is valid for new
symbol values exactly when ``shape_env.evaluate_guards(values)`` is true. Without an active
environment the hint is returned and nothing is recorded. ``x.node.hint`` reads a value without
guarding.

The ``sym_*`` helpers build a node when any argument is symbolic and fall back to Python's
builtins otherwise, so code written against them runs unchanged on plain numbers.

Only the standard library is imported here: ``import torch`` must stay fast.
"""

from __future__ import annotations

import builtins
import math
import operator
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "Guard",
    "ShapeEnv",
    "SymBool",
    "SymFloat",
    "SymInt",
    "SymNode",
    "active_shape_env",
    "guard_bool",
    "guard_float",
    "guard_int",
    "is_symbolic",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
]


# ---------------------------------------------------------------------------------------------
# Result kinds. A node's ``pytype`` is int, float or bool; each op has a rule that derives it
# from the children's pytypes (and rejects combinations Python itself would not compute).


def _numeric_kind(op: str, kinds: tuple[type, ...]) -> type:
    for kind in kinds:
        if kind is not int and kind is not float:
            raise TypeError(f"SymNode.{op}: expected int or float operands, got {kind.__name__}")
    return float if float in kinds else int


def _arith(op: str, kinds: tuple[type, ...]) -> type:
    """Python's promotion: int with int stays int, anything with a float is a float."""
    return _numeric_kind(op, kinds)


def _to_float(op: str, kinds: tuple[type, ...]) -> type:
    _numeric_kind(op, kinds)
    return float


def _to_int(op: str, kinds: tuple[type, ...]) -> type:
    _numeric_kind(op, kinds)
    return int


def _compare(op: str, kinds: tuple[type, ...]) -> type:
    _numeric_kind(op, kinds)
    return bool


def _equality(op: str, kinds: tuple[type, ...]) -> type:
    if kinds[0] is not bool or kinds[1] is not bool:
        _numeric_kind(op, kinds)
    return bool


def _logic(op: str, kinds: tuple[type, ...]) -> type:
    for kind in kinds:
        if kind is not bool:
            raise TypeError(f"SymNode.{op}: expected bool operands, got {kind.__name__}")
    return bool


def _rounding(op: str, kinds: tuple[type, ...]) -> type:
    # round(x) is an int; round(x, ndigits) keeps x's kind, like Python.
    if len(kinds) == 1:
        return _to_int(op, kinds)
    if kinds[1] is not int:
        raise TypeError(f"SymNode.{op}: ndigits must be an int, got {kinds[1].__name__}")
    return _numeric_kind(op, kinds[:1])


def _if_then_else(op: str, kinds: tuple[type, ...]) -> type:
    if kinds[0] is not bool:
        raise TypeError(f"SymNode.{op}: the condition must be a bool, got {kinds[0].__name__}")
    if kinds[1] is bool and kinds[2] is bool:
        return bool
    return _numeric_kind(op, kinds[1:])


# ---------------------------------------------------------------------------------------------
# Concrete evaluation for the few ops whose Python behaviour needs a word.


def _pow(base: int | float, exponent: int | float) -> int | float:
    if type(base) is int and type(exponent) is int and exponent < 0:
        # SymInt.__pow__ promotes to float first (as Python does), so an int-kind pow node
        # never sees a negative exponent unless guards are evaluated against other values.
        raise ValueError("integer pow with a negative exponent; convert the base to float first")
    result = base**exponent
    if isinstance(result, complex):
        raise ValueError(
            f"{base!r} ** {exponent!r} is complex; symbolic floats cannot represent it"
        )
    return result


def _if_else(condition: bool, if_true: object, if_false: object) -> object:
    return if_true if condition else if_false


def _logical_and(a: bool, b: bool) -> bool:
    return a and b


def _logical_or(a: bool, b: bool) -> bool:
    return a or b


def _sum(*values: int | float) -> int | float:
    return builtins.sum(values)


# How a node prints: (style, token, precedence). Precedences follow Python's grammar so that
# the text reads (and parses) as the Python expression it stands for.
_LOWEST, _OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW, _ATOM = 1, 2, 3, 4, 5, 7, 8, 9, 10, 11


class _Op:
    """One row of the op table: how to compute, type and print a node."""

    __slots__ = ("fn", "kind", "prec", "style", "token")

    def __init__(
        self,
        fn: Callable[..., object],
        kind: Callable[[str, tuple[type, ...]], type],
        style: str,
        token: str,
        prec: int = _ATOM,
    ) -> None:
        self.fn = fn
        self.kind = kind
        self.style = style
        self.token = token
        self.prec = prec


# name -> row. The name is also the SymNode method that builds the node (``a.add(b)``).
_OPS: dict[str, _Op] = {
    # arithmetic
    "add": _Op(operator.add, _arith, "infix", " + ", _ADD),
    "sub": _Op(operator.sub, _arith, "infix", " - ", _ADD),
    "mul": _Op(operator.mul, _arith, "infix", "*", _MUL),
    "truediv": _Op(operator.truediv, _to_float, "infix", "/", _MUL),
    "floordiv": _Op(operator.floordiv, _arith, "infix", " // ", _MUL),
    "mod": _Op(operator.mod, _arith, "infix", " % ", _MUL),
    "pow": _Op(_pow, _arith, "infix", "**", _POW),
    "neg": _Op(operator.neg, _arith, "prefix", "-", _UNARY),
    "abs": _Op(builtins.abs, _arith, "call", "abs"),
    "sym_sum": _Op(_sum, _arith, "sum", " + ", _ADD),
    "sym_min": _Op(builtins.min, _arith, "call", "min"),
    "sym_max": _Op(builtins.max, _arith, "call", "max"),
    # conversions
    "trunc": _Op(math.trunc, _to_int, "call", "int"),
    "floor": _Op(math.floor, _to_int, "call", "floor"),
    "ceil": _Op(math.ceil, _to_int, "call", "ceil"),
    "round": _Op(builtins.round, _rounding, "call", "round"),
    "to_float": _Op(builtins.float, _to_float, "call", "float"),
    # comparisons
    "eq": _Op(operator.eq, _equality, "compare", " == ", _CMP),
    "ne": _Op(operator.ne, _equality, "compare", " != ", _CMP),
    "lt": _Op(operator.lt, _compare, "compare", " < ", _CMP),
    "le": _Op(operator.le, _compare, "compare", " <= ", _CMP),
    "gt": _Op(operator.gt, _compare, "compare", " > ", _CMP),
    "ge": _Op(operator.ge, _compare, "compare", " >= ", _CMP),
    # logic
    "and_": _Op(_logical_and, _logic, "infix", " and ", _AND),
    "or_": _Op(_logical_or, _logic, "infix", " or ", _OR),
    "sym_not": _Op(operator.not_, _logic, "prefix", "not ", _NOT),
    "sym_ite": _Op(_if_else, _if_then_else, "ite", "", _LOWEST),
}

# Units whose application returns the other operand: op -> ((position of the constant, unit),
# ...). Identities and absorbing elements apply to int and bool results only: for floats
# ``x + 0`` is not ``x`` when x is -0.0, and ``x * 0`` is not 0 when x is inf.
_IDENTITIES: dict[str, tuple[tuple[int, object], ...]] = {
    "add": ((0, 0), (1, 0)),
    "sub": ((1, 0),),
    "mul": ((0, 1), (1, 1)),
    "floordiv": ((1, 1),),
    "pow": ((1, 1),),
    "and_": ((0, True), (1, True)),
    "or_": ((0, False), (1, False)),
}

# Absorbing elements: op -> the constant that, on either side, decides the result alone.
_ABSORBING: dict[str, object] = {"mul": 0, "and_": False, "or_": True}

_PYTYPES = (bool, int, float)  # bool first: it is an int subclass


def _pytype_of(value: object) -> type:
    for kind in _PYTYPES:
        if isinstance(value, kind):
            return kind
    raise TypeError(f"expected a bool, int or float, got {type(value).__name__}")


# ---------------------------------------------------------------------------------------------
# SymNode


class SymNode:
    """An immutable expression node with a concrete ``hint``.

    Build leaves with :meth:`symbol` and :meth:`constant` and everything else with the method
    named after the op (``a.add(b)``, ``a.lt(b)``, ``c.sym_ite(a, b)``, ``a.sym_sum([b, c])``)
    or :meth:`apply`. Plain Python numbers are accepted wherever a node is and become constants.
    Nodes whose children are all constants fold to a constant.

    Attributes: ``op`` (``"symbol"``, ``"constant"`` or a row of the op table), ``args`` (the
    children), ``name`` (symbols only), ``pytype`` (int, float or bool) and ``hint``.
    """

    __slots__ = ("_prec", "_text", "args", "free_symbols", "hint", "name", "op", "pytype")

    def __init__(
        self,
        op: str,
        args: tuple[SymNode, ...],
        pytype: type,
        hint: int | float | bool,
        name: str | None = None,
    ) -> None:
        self.op = op
        self.args = args
        self.name = name
        self.pytype = pytype
        self.hint = hint
        if op == "symbol":
            self.free_symbols: frozenset[str] = frozenset((name,))
        else:
            self.free_symbols = frozenset().union(*(a.free_symbols for a in args))
        self._text: str | None = None
        self._prec = _ATOM

    # -- leaves ---------------------------------------------------------------------------

    @classmethod
    def symbol(cls, name: str, hint: int | float | bool) -> SymNode:
        """A free symbol called ``name`` whose concrete value is ``hint`` (its type is kept)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a symbol name must be a non-empty str, got {name!r}")
        kind = _pytype_of(hint)
        return cls("symbol", (), kind, kind(hint), name=name)

    @classmethod
    def constant(cls, value: int | float | bool) -> SymNode:
        """A constant node; ``hint`` is the value."""
        kind = _pytype_of(value)
        return cls("constant", (), kind, kind(value))

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def apply(cls, op: str, *args: SymNode | int | float | bool) -> SymNode:
        """The node for ``op`` (a row of the op table) over ``args``, with small simplifications.

        :raises TypeError: when the operand kinds do not fit the op (``lt`` on bools, ``and_``
            on ints).
        :raises ZeroDivisionError, ValueError: when the hints cannot be combined, as Python
            would raise for the concrete values.
        """
        row = _OPS[op]
        nodes = tuple(a if isinstance(a, SymNode) else cls.constant(a) for a in args)
        pytype = row.kind(op, tuple(n.pytype for n in nodes))
        hint = pytype(row.fn(*(n.hint for n in nodes)))
        if all(n.op == "constant" for n in nodes):
            return cls("constant", (), pytype, hint)
        if pytype is not float:
            absorbing = _ABSORBING.get(op)
            for n in nodes:
                if n.op == "constant" and type(n.hint) is type(absorbing) and n.hint == absorbing:
                    return cls.constant(absorbing)
            for position, unit in _IDENTITIES.get(op, ()):
                unit_node, other = nodes[position], nodes[1 - position]
                if (
                    unit_node.op == "constant"
                    and type(unit_node.hint) is type(unit)
                    and unit_node.hint == unit
                    and other.pytype is pytype
                ):
                    return other
        return cls(op, nodes, pytype, hint)

    def sym_sum(self, others: Iterable[SymNode | int | float]) -> SymNode:
        """One n-ary sum node over this node and ``others`` (never a chain of additions).

        Integer constants are folded into one trailing constant (dropped when zero); float
        terms are kept in order because float addition is not associative.
        """
        terms = (self, *others)
        nodes = tuple(a if isinstance(a, SymNode) else SymNode.constant(a) for a in terms)
        if _numeric_kind("sym_sum", tuple(n.pytype for n in nodes)) is int:
            folded = builtins.sum(n.hint for n in nodes if n.op == "constant")
            nodes = tuple(n for n in nodes if n.op != "constant")
            if folded != 0 or not nodes:
                nodes = (*nodes, SymNode.constant(folded))
            if len(nodes) == 1:
                return nodes[0]
        return SymNode.apply("sym_sum", *nodes)

    def sym_int(self) -> SymNode:
        """This value as an int: identity for ints, truncation for floats, 0/1 for bools."""
        if self.pytype is int:
            return self
        if self.pytype is bool:
            return self.sym_ite(1, 0)
        return self.trunc()

    def sym_float(self) -> SymNode:
        """This value as a float."""
        if self.pytype is float:
            return self
        if self.pytype is bool:
            return self.sym_ite(1.0, 0.0)
        return self.to_float()

    # -- queries ------------------------------------------------------------------------

    def is_constant(self) -> bool:
        """Whether the node mentions no symbol (then it is a folded constant)."""
        return self.op == "constant"

    def is_symbolic(self) -> bool:
        """Whether the node depends on at least one symbol."""
        return self.op != "constant"

    def is_int(self) -> bool:
        return self.pytype is int

    def is_float(self) -> bool:
        return self.pytype is float

    def is_bool(self) -> bool:
        return self.pytype is bool

    def evaluate(self, values: Mapping[str, int | float | bool]) -> int | float | bool:
        """The node's value with the symbols bound to ``values`` (name -> number).

        :raises KeyError: naming a symbol missing from ``values``.
        """
        results: dict[int, int | float | bool] = {}
        for node in _postorder(self):
            if node.op == "constant":
                value = node.hint
            elif node.op == "symbol":
                value = _symbol_value(node, values)
            else:
                row = _OPS[node.op]
                value = node.pytype(row.fn(*(results[id(a)] for a in node.args)))
            results[id(node)] = value
        return results[id(self)]

    def __str__(self) -> str:
        if self._text is None:
            for node in _postorder(self, skip=lambda n: n._text is not None):
                node._text, node._prec = _render(node)
        return self._text

    def __repr__(self) -> str:
        return f"SymNode({self}, pytype={self.pytype.__name__}, hint={self.hint!r})"


def _make_node_method(op: str) -> Callable[..., SymNode]:
    def method(self: SymNode, *others: SymNode | int | float | bool) -> SymNode:
        return SymNode.apply(op, self, *others)

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"The ``{op}`` node of this node and ``others`` (see SymNode.apply)."
    return method


for _op in _OPS:
    if not hasattr(SymNode, _op):
        setattr(SymNode, _op, _make_node_method(_op))


def _symbol_value(node: SymNode, values: Mapping[str, int | float | bool]) -> int | float | bool:
    try:
        value = values[node.name]
    except KeyError:
        raise KeyError(
            f"no value for symbol {node.name!r}; pass a value for every symbol the expression "
            "mentions"
        ) from None
    if node.pytype is float:
        return float(value)
    if node.pytype is bool:
        return bool(value)
    return int(operator.index(value))  # a float for an int symbol is a mistake, not truncation


def _postorder(root: SymNode, skip: Callable[[SymNode], bool] | None = None) -> list[SymNode]:
    """Every node under ``root`` once, children before parents (iterative: chains get deep)."""
    order: list[SymNode] = []
    seen: set[int] = set()
    stack: list[tuple[SymNode, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or (skip is not None and skip(node)):
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.args))
    return order


def _render(node: SymNode) -> tuple[str, int]:
    """The text and precedence of ``node``; its children are rendered already."""
    if node.op == "symbol":
        return node.name, _ATOM
    if node.op == "constant":
        text = repr(node.hint)
        return text, (_UNARY if text.startswith("-") else _ATOM)
    row = _OPS[node.op]

    def child(index: int, tight: bool) -> str:
        arg = node.args[index]
        below = arg._prec <= row.prec if tight else arg._prec < row.prec
        return f"({arg._text})" if below else arg._text

    if row.style == "call":
        return f"{row.token}({', '.join(a._text for a in node.args)})", _ATOM
    if row.style == "prefix":
        return f"{row.token}{child(0, tight=False)}", row.prec
    if row.style == "ite":
        text = f"{child(1, True)} if {child(0, True)} else {child(2, True)}"
        return text, row.prec
    if row.style == "sum":
        texts = [child(0, False)] + [child(i, True) for i in range(1, len(node.args))]
        return _render_terms(texts, node.args), row.prec
    # infix and compare: comparisons must not chain, and ** groups to the right.
    left_tight = row.style == "compare" or node.op == "pow"
    right_tight = node.op != "pow"
    if node.op == "add":
        return _render_terms([child(0, left_tight), child(1, right_tight)], node.args), row.prec
    return f"{child(0, left_tight)}{row.token}{child(1, right_tight)}", row.prec


def _render_terms(texts: list[str], args: tuple[SymNode, ...]) -> str:
    """``a + b + c``, writing ``a + -2`` as ``a - 2``."""
    out = texts[0]
    for text, arg in zip(texts[1:], args[1:]):
        if arg.op == "constant" and arg._text.startswith("-"):
            out += f" - {arg._text[1:]}"
        else:
            out += f" + {text}"
    return out


# ---------------------------------------------------------------------------------------------
# Guards and the shape environment


class Guard(tuple):
    """A recorded decision: the bool node ``expr`` evaluated to ``value`` while tracing.

    It is a 2-tuple ``(expr, value)`` as well, so ``for expr, value in env.guards`` works.
    """

    __slots__ = ()

    def __new__(cls, expr: SymNode, value: bool) -> Guard:
        return tuple.__new__(cls, (expr, value))

    @property
    def expr(self) -> SymNode:
        return self[0]

    @property
    def value(self) -> bool:
        return self[1]

    def holds(self, values: Mapping[str, int | float | bool]) -> bool:
        """Whether ``expr`` still evaluates to ``value`` with the symbols bound to ``values``.

        A condition that cannot be computed for those values (a division by zero) does not hold.
        """
        try:
            return self.expr.evaluate(values) == self.value
        except (ArithmeticError, ValueError):
            return False

    def __str__(self) -> str:
        return str(self.expr) if self.value else str(self.expr.sym_not())

    def __repr__(self) -> str:
        return f"Guard({self.expr}, {self.value})"


class _ActiveEnvs(threading.local):
    def __init__(self) -> None:
        self.stack: list[ShapeEnv] = []


_ACTIVE = _ActiveEnvs()


def active_shape_env() -> ShapeEnv | None:
    """The innermost ``with shape_env:`` block's environment on this thread, or ``None``."""
    stack = _ACTIVE.stack
    return stack[-1] if stack else None


class ShapeEnv:
    """Creates symbols and records the guards taken on them.

    Use it as a context manager to make it the active environment on this thread; conversions
    of symbolic values to Python values record their guards in the active environment.

    Attributes: ``guards`` (list of :class:`Guard`, in recording order, without duplicates) and
    ``var_to_val`` (symbol name -> the hint it was created with).
    """

    def __init__(self) -> None:
        self.guards: list[Guard] = []
        self.var_to_val: dict[str, int | float] = {}
        self._recorded: set[tuple[str, bool]] = set()
        self._counters = {"s": 0, "f": 0}

    def _new_name(self, prefix: str, name: str | None) -> str:
        if name is None:
            while f"{prefix}{self._counters[prefix]}" in self.var_to_val:
                self._counters[prefix] += 1
            name = f"{prefix}{self._counters[prefix]}"
            self._counters[prefix] += 1
        elif name in self.var_to_val:
            raise ValueError(f"this ShapeEnv already has a symbol named {name!r}")
        return name

    def create_symbol(self, hint: int, name: str | None = None) -> SymInt:
        """A new integer symbol (named ``s0``, ``s1``, ... unless ``name`` is given)."""
        if isinstance(hint, bool) or not isinstance(hint, int):
            raise TypeError(f"create_symbol: hint must be an int, got {type(hint).__name__}")
        node = SymNode.symbol(self._new_name("s", name), hint)
        self.var_to_val[node.name] = node.hint
        return SymInt(node)

    def create_symfloat(self, hint: float, name: str | None = None) -> SymFloat:
        """A new float symbol (named ``f0``, ``f1``, ... unless ``name`` is given)."""
        if isinstance(hint, bool) or not isinstance(hint, (int, float)):
            raise TypeError(f"create_symfloat: hint must be a float, got {type(hint).__name__}")
        node = SymNode.symbol(self._new_name("f", name), float(hint))
        self.var_to_val[node.name] = node.hint
        return SymFloat(node)

    def record_guard(self, expr: SymNode | SymBool, value: bool) -> None:
        """Record that ``expr`` was taken to be ``value``; constants and repeats are skipped."""
        node = expr.node if isinstance(expr, SymBool) else expr
        if node.pytype is not bool:
            raise TypeError(f"a guard must be a bool expression, got {node.pytype.__name__}")
        if node.is_constant():
            return
        key = (str(node), bool(value))
        if key not in self._recorded:
            self._recorded.add(key)
            self.guards.append(Guard(node, bool(value)))

    def evaluate_guards(self, values: Mapping[str, int | float | bool]) -> bool:
        """Whether every recorded guard holds with the symbols bound to ``values``.

        :raises KeyError: when a guard mentions a symbol missing from ``values``.
        """
        return all(guard.holds(values) for guard in self.guards)

    def format_guards(self) -> str:
        """The guards as conditions, one per line (``s0 > 2``, ``not s1 == 1``)."""
        return "\n".join(str(guard) for guard in self.guards)

    def __enter__(self) -> ShapeEnv:
        _ACTIVE.stack.append(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        stack = _ACTIVE.stack
        if not stack or stack[-1] is not self:
            raise RuntimeError("ShapeEnv contexts exited out of order")
        stack.pop()

    def __repr__(self) -> str:
        return f"ShapeEnv(symbols={list(self.var_to_val)}, guards={len(self.guards)})"


def guard_bool(b: bool | SymBool) -> bool:
    """``b`` as a Python bool; a SymBool gives its hint, recorded as a guard in the active env."""
    if not isinstance(b, SymBool):
        return builtins.bool(b)
    value = b.node.hint
    env = active_shape_env()
    if env is not None:
        env.record_guard(b.node, value)
    return value


def guard_int(a: int | SymInt) -> int:
    """``a`` as a Python int; a SymInt gives its hint, guarded by ``a == hint`` (active env)."""
    if not isinstance(a, SymInt):
        return operator.index(a)
    value = a.node.hint
    env = active_shape_env()
    if env is not None:
        env.record_guard(a.node.eq(value), True)
    return value


def guard_float(a: float | SymFloat | SymInt) -> float:
    """``a`` as a Python float; for a SymFloat, its hint, guarded by ``a == hint``."""
    if isinstance(a, SymInt):
        return float(guard_int(a))
    if not isinstance(a, SymFloat):
        return builtins.float(a)
    value = a.node.hint
    env = active_shape_env()
    if env is not None:
        env.record_guard(a.node.eq(value), True)
    return value


# ---------------------------------------------------------------------------------------------
# The wrappers


def _numeric_node(value: object) -> SymNode | None:
    """A node for an arithmetic operand, or None when the operand is not a number we know."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.node
    if isinstance(value, bool):
        return SymNode.constant(int(value))  # Python does arithmetic on bools as ints
    if isinstance(value, (int, float)):
        return SymNode.constant(value)
    return None


def _bool_node(value: object) -> SymNode | None:
    if isinstance(value, SymBool):
        return value.node
    if isinstance(value, bool):
        return SymNode.constant(value)
    return None


def _any_node(value: object) -> SymNode | None:
    if isinstance(value, (SymInt, SymFloat, SymBool)):
        return value.node
    if isinstance(value, (int, float)):
        return SymNode.constant(value)
    return None


def _wrap(node: SymNode) -> SymInt | SymFloat | SymBool:
    return _WRAPPERS[node.pytype](node)


def _pow_nodes(base: SymNode, exponent: SymNode) -> SymNode:
    # int ** int is an int only for a non-negative exponent; the result's type depends on it,
    # so a symbolic exponent is guarded (as PyTorch does). Python computes negative powers in
    # floating point.
    if base.pytype is int and exponent.pytype is int and not guard_bool(_wrap(exponent.ge(0))):
        return base.to_float().pow(exponent.to_float())
    return base.pow(exponent)


def _builder(op: str) -> Callable[[SymNode, SymNode], SymNode]:
    def build(a: SymNode, b: SymNode) -> SymNode:
        return SymNode.apply(op, a, b)

    return build


# Python operator -> how to build its node. Each row gives ``__op__`` and ``__rop__``.
_ARITHMETIC: dict[str, Callable[[SymNode, SymNode], SymNode]] = {
    "add": _builder("add"),
    "sub": _builder("sub"),
    "mul": _builder("mul"),
    "truediv": _builder("truediv"),
    "floordiv": _builder("floordiv"),
    "mod": _builder("mod"),
    "pow": _pow_nodes,
}
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")  # Python reflects these itself
_LOGICAL = {"and": "and_", "or": "or_"}  # SymBool's & and |


def _binary_method(
    name: str,
    build: Callable[[SymNode, SymNode], SymNode],
    operand: Callable[[object], SymNode | None],
    reflected: bool,
) -> Callable[[object, object], object]:
    def method(self: SymInt | SymFloat | SymBool, other: object) -> object:
        other_node = operand(other)
        if other_node is None:
            return NotImplemented
        if reflected:
            return _wrap(build(other_node, self.node))
        return _wrap(build(self.node, other_node))

    method.__name__ = method.__qualname__ = name
    return method


def _install(
    cls: type,
    table: dict[str, Callable[[SymNode, SymNode], SymNode]],
    operand: Callable[[object], SymNode | None],
) -> None:
    """Give ``cls`` ``__op__`` and ``__rop__`` for every row of ``table``."""
    for op, build in table.items():
        setattr(cls, f"__{op}__", _binary_method(f"__{op}__", build, operand, False))
        setattr(cls, f"__r{op}__", _binary_method(f"__r{op}__", build, operand, True))


class _SymScalar:
    """What the three wrappers share: the node, the text, construction checks."""

    _pytype: type = object

    def __init__(self, node: SymNode) -> None:
        if not isinstance(node, SymNode) or node.pytype is not self._pytype:
            raise TypeError(
                f"{type(self).__name__} wraps a SymNode of pytype {self._pytype.__name__}, "
                f"got {node!r}"
            )
        self.node = node

    def __repr__(self) -> str:
        return str(self.node)

    __str__ = __repr__


class _SymNumber(_SymScalar):
    """Arithmetic shared by SymInt and SymFloat."""

    def __neg__(self) -> SymInt | SymFloat:
        return _wrap(self.node.neg())

    def __pos__(self) -> SymInt | SymFloat:
        return self

    def __abs__(self) -> SymInt | SymFloat:
        return _wrap(self.node.abs())

    def __divmod__(self, other: object) -> tuple[SymInt | SymFloat, SymInt | SymFloat]:
        if _numeric_node(other) is None:
            return NotImplemented
        return self // other, self % other

    def __rdivmod__(self, other: object) -> tuple[SymInt | SymFloat, SymInt | SymFloat]:
        if _numeric_node(other) is None:
            return NotImplemented
        return other // self, other % self

    def __bool__(self) -> bool:
        return guard_bool(self != 0)

    def __sym_max__(self, other: object) -> SymInt | SymFloat:
        return sym_max(self, other)

    def __sym_min__(self, other: object) -> SymInt | SymFloat:
        return sym_min(self, other)

    def __sym_int__(self) -> SymInt:
        return sym_int(self)

    def __sym_float__(self) -> SymFloat:
        return sym_float(self)


_install(_SymNumber, _ARITHMETIC, _numeric_node)
for _op in _COMPARISONS:
    setattr(
        _SymNumber, f"__{_op}__", _binary_method(f"__{_op}__", _builder(_op), _numeric_node, False)
    )


class SymInt(_SymNumber):
    """A symbolic int. ``int(s)``, ``operator.index(s)`` and ``bool(s)`` guard; hashing raises."""

    _pytype = int

    def __int__(self) -> int:
        return guard_int(self)

    __index__ = __int__

    def __float__(self) -> float:
        return float(guard_int(self))

    def __hash__(self) -> int:
        raise TypeError("unhashable type: non-nested SymInt")

    def __round__(self, ndigits: int | SymInt | None = None) -> SymInt:
        if ndigits is None:
            return self
        if not isinstance(ndigits, (int, SymInt)) or isinstance(ndigits, bool):
            raise TypeError(f"ndigits must be an int, got {type(ndigits).__name__}")
        return SymInt(self.node.round(_numeric_node(ndigits)))

    def __trunc__(self) -> SymInt:
        return self

    __floor__ = __ceil__ = __trunc__


class SymFloat(_SymNumber):
    """A symbolic float. ``float(f)``, ``int(f)``, ``bool(f)`` and ``hash(f)`` guard."""

    _pytype = float

    def __float__(self) -> float:
        return guard_float(self)

    def __int__(self) -> int:
        return guard_int(SymInt(self.node.trunc()))

    def __hash__(self) -> int:
        # As PyTorch: hashing specializes (guards on the value).
        return hash(guard_float(self))

    def __round__(self, ndigits: int | SymInt | None = None) -> SymInt | SymFloat:
        if ndigits is None:
            return SymInt(self.node.round())
        if not isinstance(ndigits, (int, SymInt)) or isinstance(ndigits, bool):
            raise TypeError(f"ndigits must be an int, got {type(ndigits).__name__}")
        return SymFloat(self.node.round(_numeric_node(ndigits)))

    def __trunc__(self) -> SymInt:
        return SymInt(self.node.trunc())

    def __floor__(self) -> SymInt:
        return SymInt(self.node.floor())

    def __ceil__(self) -> SymInt:
        return SymInt(self.node.ceil())

    def is_integer(self) -> SymBool:
        """Whether the value is integral (symbolic, like ``float.is_integer``)."""
        return SymBool(self.node.eq(self.node.floor()))


class SymBool(_SymScalar):
    """A symbolic bool. ``bool(b)`` and ``hash(b)`` guard; ``~b`` is logical not (as PyTorch)."""

    _pytype = bool

    def __bool__(self) -> bool:
        return guard_bool(self)

    def __hash__(self) -> int:
        # As PyTorch: hashing specializes (guards on the value).
        return hash(guard_bool(self))

    def __invert__(self) -> SymBool:
        return SymBool(self.node.sym_not())

    def __sym_not__(self) -> SymBool:
        return SymBool(self.node.sym_not())

    def __sym_ite__(self, then: object, otherwise: object) -> SymInt | SymFloat | SymBool:
        return sym_ite(self, then, otherwise)


_install(SymBool, {py: _builder(op) for py, op in _LOGICAL.items()}, _bool_node)
for _op in ("eq", "ne"):
    setattr(SymBool, f"__{_op}__", _binary_method(f"__{_op}__", _builder(_op), _bool_node, False))

_WRAPPERS: dict[type, type] = {int: SymInt, float: SymFloat, bool: SymBool}


# ---------------------------------------------------------------------------------------------
# Helpers


def is_symbolic(value: object) -> bool:
    """Whether ``value`` is a SymInt, SymFloat or SymBool that depends on a symbol."""
    return isinstance(value, _SymScalar) and value.node.is_symbolic()


def sym_int(a: object) -> int | SymInt:
    """``a`` as an int, truncating toward zero: ``int(a)`` for plain values."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, _SymScalar):
        return SymInt(a.node.sym_int())
    return builtins.int(a)


def sym_float(a: object) -> float | SymFloat:
    """``a`` as a float: ``float(a)`` for plain values."""
    if isinstance(a, SymFloat):
        return a
    if isinstance(a, _SymScalar):
        return SymFloat(a.node.sym_float())
    return builtins.float(a)


def _extremum(op: str, builtin: Callable[..., object], a: object, b: object) -> object:
    if isinstance(a, (SymInt, SymFloat)) or isinstance(b, (SymInt, SymFloat)):
        nodes = (_numeric_node(a), _numeric_node(b))
        if None in nodes:
            raise TypeError(
                f"{op}: expected numbers, got {type(a).__name__} and {type(b).__name__}"
            )
        return _wrap(SymNode.apply(op, *nodes))
    for value in (a, b):
        if not isinstance(value, (int, float)):
            raise TypeError(f"{op}: expected numbers, got {type(value).__name__}")
    # As PyTorch: mixing an int and a float promotes, so max(3, 2.0) is 3.0 (Python says 3).
    if isinstance(a, float) or isinstance(b, float):
        return builtins.float(builtin(a, b))
    return builtin(a, b)


def sym_max(a: int | float | SymInt | SymFloat, b: int | float | SymInt | SymFloat) -> object:
    """``max(a, b)``, symbolic when either is; an int and a float give a float."""
    return _extremum("sym_max", builtins.max, a, b)


def sym_min(a: int | float | SymInt | SymFloat, b: int | float | SymInt | SymFloat) -> object:
    """``min(a, b)``, symbolic when either is; an int and a float give a float."""
    return _extremum("sym_min", builtins.min, a, b)


def sym_sum(args: Iterable[object]) -> object:
    """``sum(args)`` as one n-ary node when any term is symbolic, else the builtin ``sum``."""
    terms = tuple(args)
    if not any(isinstance(t, (SymInt, SymFloat)) for t in terms):
        return builtins.sum(terms)
    nodes = tuple(_numeric_node(t) for t in terms)
    if None in nodes:
        bad = next(t for t, n in zip(terms, nodes) if n is None)
        raise TypeError(f"sym_sum: expected numbers, got {type(bad).__name__}")
    return _wrap(nodes[0].sym_sum(nodes[1:]))


def sym_not(a: object) -> object:
    """Logical not: symbolic for a SymBool, ``not a`` otherwise."""
    if isinstance(a, SymBool):
        return SymBool(a.node.sym_not())
    return not a


def sym_ite(b: object, t: object, f: object) -> object:
    """``t if b else f``; a SymBool condition gives a symbolic result (both branches kept).

    For a plain condition, the chosen branch is returned as it is. The branches must both be
    booleans or both numbers; an int and a float branch give a float.
    """
    if not isinstance(b, SymBool):
        return t if b else f
    branches = (_any_node(t), _any_node(f))
    if None in branches:
        raise TypeError(
            f"sym_ite: expected numbers or bools, got {type(t).__name__} and {type(f).__name__}"
        )
    return _wrap(b.node.sym_ite(*branches))
