"""Symbolic scalars: SymNode, SymInt/SymFloat/SymBool, ShapeEnv, sym_* helpers.

Every value is checked against plain Python computing the same thing on the hints.
"""

from __future__ import annotations

import itertools
import math
import operator
import threading

import pytest

from torch._core.symbolic import (
    Guard,
    ShapeEnv,
    SymBool,
    SymFloat,
    SymInt,
    SymNode,
    active_shape_env,
    guard_bool,
    guard_float,
    guard_int,
    is_symbolic,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)

# Operand factories: (label, build(env, value) -> operand). Plain operands are the value itself.
KINDS = {
    "SymInt": lambda env, v: env.create_symbol(v),
    "SymFloat": lambda env, v: env.create_symfloat(v),
    "int": lambda env, v: v,
    "float": lambda env, v: v,
}
VALUES = {"SymInt": (7, -3, 2), "SymFloat": (2.5, -1.5), "int": (7, -3, 2), "float": (2.5, -1.5)}
SYMBOLIC = ("SymInt", "SymFloat")
ARITHMETIC = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}
COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
WRAPPER_FOR = {int: SymInt, float: SymFloat, bool: SymBool}


def kind_pairs():
    """Every (left kind, right kind) with at least one symbolic side, both orders."""
    return [
        (left, right)
        for left, right in itertools.product(KINDS, KINDS)
        if left in SYMBOLIC or right in SYMBOLIC
    ]


def value_pairs(left, right):
    return list(itertools.product(VALUES[left], VALUES[right]))


def hint(x):
    return x.node.hint if isinstance(x, (SymInt, SymFloat, SymBool)) else x


# ---------------------------------------------------------------------------------------------
# Arithmetic and comparisons against plain Python


@pytest.mark.parametrize("symbol", ARITHMETIC)
@pytest.mark.parametrize(("left", "right"), kind_pairs())
def test_arithmetic_matches_python(symbol, left, right):
    fn = ARITHMETIC[symbol]
    for a, b in value_pairs(left, right):
        expected = fn(a, b)
        env = ShapeEnv()
        x, y = KINDS[left](env, a), KINDS[right](env, b)
        if isinstance(expected, complex):
            # a negative base to a fractional power: Python goes complex, symbolic floats refuse
            with pytest.raises(ValueError, match="complex"):
                fn(x, y)
            continue
        result = fn(x, y)
        assert type(result) is WRAPPER_FOR[type(expected)], (a, symbol, b)
        assert type(result.node.hint) is type(expected)
        assert result.node.hint == expected, (a, symbol, b)


@pytest.mark.parametrize("symbol", ARITHMETIC)
def test_arithmetic_reevaluates_with_new_values(symbol):
    fn = ARITHMETIC[symbol]
    env = ShapeEnv()
    x, y = env.create_symbol(7), env.create_symbol(3)
    expr = fn(x, y)
    assert expr.node.evaluate({"s0": 9, "s1": 4}) == fn(9, 4)
    assert expr.node.evaluate({"s0": -9, "s1": 2}) == fn(-9, 2)


@pytest.mark.parametrize("symbol", COMPARISONS)
@pytest.mark.parametrize(("left", "right"), kind_pairs())
def test_comparisons_match_python(symbol, left, right):
    fn = COMPARISONS[symbol]
    for a, b in [*value_pairs(left, right), (2, 2)]:
        env = ShapeEnv()
        x, y = KINDS[left](env, a), KINDS[right](env, b)
        result = fn(x, y)
        assert type(result) is SymBool
        assert result.node.hint is fn(a, b), (a, symbol, b)


def test_operand_order_matters_for_non_commutative_ops():
    s = ShapeEnv().create_symbol(7)
    assert hint(s - 2) == 5 and hint(2 - s) == -5
    assert hint(s // 2) == 3 and hint(20 // s) == 2
    assert hint(s % 3) == 1 and hint(3 % s) == 3
    assert hint(s**2) == 49 and hint(2**s) == 128
    assert hint(s / 2) == 3.5 and hint(14 / s) == 2.0
    assert hint(1.5 - s) == -5.5 and type(1.5 - s) is SymFloat


def test_result_types():
    env = ShapeEnv()
    i, f = env.create_symbol(6), env.create_symfloat(1.5)
    assert type(i + 1) is SymInt
    assert type(i + True) is SymInt  # bools are ints in arithmetic, as in Python
    assert type(i / 2) is SymFloat
    assert type(i / i) is SymFloat
    assert type(i // 4) is SymInt
    assert type(i // 4.0) is SymFloat
    assert type(i + f) is SymFloat
    assert type(f + i) is SymFloat
    assert type(2 * f) is SymFloat
    assert type(i**2) is SymInt
    assert type(i**-1) is SymFloat
    assert type(i**0.5) is SymFloat
    assert type(i < f) is SymBool


def test_negative_power_of_an_int_is_a_float():
    s = ShapeEnv().create_symbol(2)
    assert type(s**-2) is SymFloat
    assert hint(s**-2) == 2**-2 == 0.25
    assert hint(4 ** -ShapeEnv().create_symbol(1)) == 0.25


def test_symbolic_int_exponent_is_guarded_non_negative():
    env = ShapeEnv()
    base, exponent = env.create_symbol(3), env.create_symbol(2)
    with env:
        result = base**exponent
    assert type(result) is SymInt and hint(result) == 9
    assert [str(g) for g in env.guards] == ["s1 >= 0"]

    env = ShapeEnv()
    base, exponent = env.create_symbol(2), env.create_symbol(-1)
    with env:
        result = base**exponent
    assert type(result) is SymFloat and hint(result) == 0.5
    assert [(str(g.expr), g.value) for g in env.guards] == [("s1 >= 0", False)]
    assert env.evaluate_guards({"s0": 2, "s1": -3})
    assert not env.evaluate_guards({"s0": 2, "s1": 3})


def test_division_by_zero_raises_like_python():
    s = ShapeEnv().create_symbol(0)
    with pytest.raises(ZeroDivisionError):
        _ = 1 / s
    with pytest.raises(ZeroDivisionError):
        _ = 5 // s
    with pytest.raises(ZeroDivisionError):
        _ = 5 % s


@pytest.mark.parametrize("value", [7, -7, 0])
def test_int_unary_and_rounding(value):
    s = ShapeEnv().create_symbol(value)
    assert hint(-s) == -value and type(-s) is SymInt
    assert +s is s
    assert hint(abs(s)) == abs(value) and type(abs(s)) is SymInt
    for fn in (math.trunc, math.floor, math.ceil, round):
        assert fn(s) is s  # integral already
    for ndigits in (-1, 0, 2):
        assert type(round(s, ndigits)) is SymInt
        assert hint(round(s, ndigits)) == round(value, ndigits)
    assert hint(round(ShapeEnv().create_symbol(25), -1)) == round(25, -1) == 20
    assert hint(round(ShapeEnv().create_symbol(35), -1)) == round(35, -1) == 40


@pytest.mark.parametrize("value", [2.5, 3.5, -2.5, -2.7, 2.7, 0.0])
def test_float_unary_and_rounding(value):
    f = ShapeEnv().create_symfloat(value)
    assert hint(-f) == -value and type(-f) is SymFloat
    assert hint(abs(f)) == abs(value)
    for fn in (math.trunc, math.floor, math.ceil, round):
        result = fn(f)
        assert type(result) is SymInt, fn
        assert hint(result) == fn(value), fn
    assert type(round(f, 1)) is SymFloat
    assert hint(round(f, 1)) == round(value, 1)
    assert hint(f.is_integer()) is value.is_integer()


def test_round_rejects_non_int_ndigits():
    env = ShapeEnv()
    with pytest.raises(TypeError):
        round(env.create_symbol(3), 1.0)
    with pytest.raises(TypeError):
        round(env.create_symfloat(3.0), 1.5)


def test_divmod():
    s = ShapeEnv().create_symbol(17)
    q, r = divmod(s, 5)
    assert (hint(q), hint(r)) == divmod(17, 5)
    q, r = divmod(40, s)
    assert (hint(q), hint(r)) == divmod(40, 17)
    q, r = divmod(s, 2.5)
    assert type(q) is SymFloat and (hint(q), hint(r)) == divmod(17, 2.5)


# ---------------------------------------------------------------------------------------------
# Unknown operands


UNKNOWN = ["a", [1], (1,), object(), None, 1j]
NUMERIC_DUNDERS = [f"__{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod")] + [
    f"__r{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")
]
NUMERIC_DUNDERS += ["__pow__", "__divmod__", "__rdivmod__"]
NUMERIC_DUNDERS += [f"__{op}__" for op in ("eq", "ne", "lt", "le", "gt", "ge")]


@pytest.mark.parametrize("kind", SYMBOLIC)
@pytest.mark.parametrize("dunder", NUMERIC_DUNDERS)
def test_unknown_operands_give_notimplemented(kind, dunder):
    x = KINDS[kind](ShapeEnv(), VALUES[kind][0])
    for other in [*UNKNOWN, x > 0]:  # a SymBool is not a number operand either
        assert getattr(x, dunder)(other) is NotImplemented, (dunder, other)


@pytest.mark.parametrize("kind", SYMBOLIC)
def test_unknown_operands_raise_typeerror(kind):
    x = KINDS[kind](ShapeEnv(), VALUES[kind][0])
    for other in (object(), None, "a"):
        for fn in (operator.add, operator.sub, operator.truediv, operator.pow, operator.lt):
            with pytest.raises(TypeError):
                fn(x, other)
            with pytest.raises(TypeError):
                fn(other, x)
    assert (x == "a") is False  # Python's fallback for == is identity
    assert (x != "a") is True


def test_sequence_repetition_uses_index_like_python():
    # list * SymInt goes through __index__ (a guarded conversion), as with PyTorch's SymInt
    env = ShapeEnv()
    s = env.create_symbol(3)
    with env:
        assert [0] * s == [0, 0, 0]
        assert "ab" * s == "ababab"
    assert [str(g) for g in env.guards] == ["s0 == 3"]


def test_symbool_operands():
    env = ShapeEnv()
    b = env.create_symbol(3) > 2
    for other in (1, 1.0, "a", None, env.create_symbol(1)):
        for dunder in ("__and__", "__rand__", "__or__", "__ror__", "__eq__", "__ne__"):
            assert getattr(b, dunder)(other) is NotImplemented
    with pytest.raises(TypeError):
        _ = b & 1
    with pytest.raises(TypeError):
        _ = b + 1  # PyTorch's SymBool has no arithmetic either


# ---------------------------------------------------------------------------------------------
# SymBool logic


@pytest.mark.parametrize(("p", "q"), list(itertools.product([True, False], repeat=2)))
def test_symbool_logic_matches_python(p, q):
    env = ShapeEnv()
    a = env.create_symbol(1 if p else 0) > 0
    b = env.create_symbol(1 if q else 0) > 0
    for x, y in ((a, b), (a, q), (p, b)):
        assert type(x & y) is SymBool and hint(x & y) is (p and q)
        assert type(x | y) is SymBool and hint(x | y) is (p or q)
        assert type(x == y) is SymBool and hint(x == y) is (p == q)
        assert type(x != y) is SymBool and hint(x != y) is (p != q)
    assert type(~a) is SymBool and hint(~a) is (not p)  # logical not, as PyTorch (not -2)
    assert hint(sym_not(a)) is (not p)


def test_symbool_identities_simplify():
    b = ShapeEnv().create_symbol(3) > 2
    assert (b & True).node is b.node
    assert (False | b).node is b.node
    assert (b & False).node.is_constant() and hint(b & False) is False
    assert (True | b).node.is_constant() and hint(True | b) is True


# ---------------------------------------------------------------------------------------------
# Conversions, hashing and guards


def test_conversions_without_env_record_nothing():
    env = ShapeEnv()
    s, f = env.create_symbol(5), env.create_symfloat(2.5)
    assert active_shape_env() is None
    assert int(s) == 5 and type(int(s)) is int
    assert operator.index(s) == 5
    assert float(s) == 5.0 and type(float(s)) is float
    assert float(f) == 2.5
    assert int(f) == 2
    assert bool(s > 4) is True
    assert bool(s)
    assert list(range(s)) == [0, 1, 2, 3, 4]
    assert env.guards == []


def test_bool_records_guard_in_active_env():
    env = ShapeEnv()
    s = env.create_symbol(5)
    with env as active:
        assert active is env and active_shape_env() is env
        assert bool(s > 2) is True
        assert bool(s < 2) is False
        if s == 5:
            pass
    assert active_shape_env() is None
    assert [(str(g.expr), g.value) for g in env.guards] == [
        ("s0 > 2", True),
        ("s0 < 2", False),
        ("s0 == 5", True),
    ]
    assert all(isinstance(g, Guard) for g in env.guards)
    expr, value = env.guards[0]  # a guard is also an (expr, value) pair
    assert isinstance(expr, SymNode) and value is True


@pytest.mark.parametrize(
    ("convert", "guard"),
    [
        (int, "s0 == 5"),
        (operator.index, "s0 == 5"),
        (float, "s0 == 5"),
        (bool, "s0 != 0"),
        (lambda s: [10, 20, 30, 40, 50, 60][s], "s0 == 5"),
        (lambda s: list(range(s)), "s0 == 5"),
        (guard_int, "s0 == 5"),
    ],
)
def test_int_conversions_record_guards(convert, guard):
    env = ShapeEnv()
    s = env.create_symbol(5)
    with env:
        convert(s)
    assert [str(g) for g in env.guards] == [guard]
    assert env.evaluate_guards({"s0": 5})
    assert not env.evaluate_guards({"s0": 4 if guard != "s0 != 0" else 0})


def test_float_conversions_record_guards():
    env = ShapeEnv()
    f = env.create_symfloat(2.5)
    with env:
        assert float(f) == 2.5
        assert int(f) == 2
        assert guard_float(f) == 2.5
    assert [str(g) for g in env.guards] == ["f0 == 2.5", "int(f0) == 2"]
    assert env.evaluate_guards({"f0": 2.5})
    assert not env.evaluate_guards({"f0": 2.6})


def test_hash():
    env = ShapeEnv()
    s, f = env.create_symbol(5), env.create_symfloat(2.5)
    with env:
        with pytest.raises(TypeError, match="unhashable type: non-nested SymInt"):
            hash(s)
        with pytest.raises(TypeError):
            {s: 1}  # noqa: B018
        assert env.guards == []
        # as PyTorch: a SymFloat or SymBool hashes by specializing on its value
        assert hash(f) == hash(2.5)
        assert hash(s > 3) == hash(True)
    assert [str(g) for g in env.guards] == ["f0 == 2.5", "s0 > 3"]


def test_guards_are_deduplicated_and_constants_skipped():
    env = ShapeEnv()
    s = env.create_symbol(5)
    with env:
        for _ in range(3):
            bool(s > 2)
            int(s)
        bool(SymBool(SymNode.constant(True)))
        guard_bool(True)
        guard_int(4)
    assert [str(g) for g in env.guards] == ["s0 > 2", "s0 == 5"]


def test_guard_helpers_on_plain_values():
    assert guard_bool(1) is True
    assert guard_int(7) == 7
    assert guard_float(2) == 2.0 and type(guard_float(2)) is float
    with pytest.raises(TypeError):
        guard_int(2.5)


def test_guards_go_to_the_innermost_active_env():
    outer, inner = ShapeEnv(), ShapeEnv()
    s = outer.create_symbol(4)
    with outer:
        bool(s > 1)
        with inner:
            assert active_shape_env() is inner
            bool(s > 2)
        assert active_shape_env() is outer
        bool(s > 3)
    assert [str(g) for g in outer.guards] == ["s0 > 1", "s0 > 3"]
    assert [str(g) for g in inner.guards] == ["s0 > 2"]


def test_exiting_out_of_order_is_an_error():
    a, b = ShapeEnv(), ShapeEnv()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="out of order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert active_shape_env() is None


def test_evaluate_guards_against_new_values():
    env = ShapeEnv()
    s0, s1 = env.create_symbol(8), env.create_symbol(3)
    with env:
        assert bool(s0 % s1 == 2)
        assert bool(s0 + s1 > 10)
        assert int(sym_max(s0, s1)) == 8
    assert env.format_guards() == "s0 % s1 == 2\ns0 + s1 > 10\nmax(s0, s1) == 8"
    assert env.evaluate_guards({"s0": 8, "s1": 3})
    assert env.evaluate_guards({"s0": 8, "s1": 6})
    assert not env.evaluate_guards({"s0": 8, "s1": 2})  # 8 % 2 == 0
    assert not env.evaluate_guards({"s0": 5, "s1": 3})
    assert not env.evaluate_guards({"s0": 8, "s1": 0})  # undefined is not satisfied
    with pytest.raises(KeyError, match="s1"):
        env.evaluate_guards({"s0": 8})
    with pytest.raises(TypeError):
        env.evaluate_guards({"s0": 8.0, "s1": 3})  # a float for an int symbol


def test_false_guards_are_kept_as_false():
    env = ShapeEnv()
    s = env.create_symbol(1)
    with env:
        assert not (s > 1)
    assert env.guards == [Guard(env.guards[0].expr, False)]
    assert str(env.guards[0]) == "not s0 > 1"
    assert env.evaluate_guards({"s0": 0})
    assert not env.evaluate_guards({"s0": 2})


def test_record_guard_checks_its_input():
    env = ShapeEnv()
    s = env.create_symbol(2)
    with pytest.raises(TypeError):
        env.record_guard(s.node, True)
    env.record_guard(s > 1, True)
    assert [str(g) for g in env.guards] == ["s0 > 1"]


def test_active_env_is_thread_local():
    main_env, thread_env = ShapeEnv(), ShapeEnv()
    s = main_env.create_symbol(5)
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def worker():
        seen["before"] = active_shape_env()
        bool(s > 1)  # nothing active on this thread: not recorded anywhere
        with thread_env:
            entered.set()
            release.wait(5)
            bool(s > 2)
            seen["inside"] = active_shape_env()

    with main_env:
        thread = threading.Thread(target=worker)
        thread.start()
        entered.wait(5)
        assert active_shape_env() is main_env  # the worker's env did not leak here
        bool(s > 3)
        release.set()
        thread.join(5)
    assert seen == {"before": None, "inside": thread_env}
    assert [str(g) for g in main_env.guards] == ["s0 > 3"]
    assert [str(g) for g in thread_env.guards] == ["s0 > 2"]


# ---------------------------------------------------------------------------------------------
# ShapeEnv symbols


def test_create_symbols():
    env = ShapeEnv()
    a, b = env.create_symbol(2), env.create_symbol(3)
    n = env.create_symbol(4, name="batch")
    f = env.create_symfloat(0.5)
    g = env.create_symfloat(1)  # an int hint for a float symbol becomes a float
    assert [repr(x) for x in (a, b, n, f, g)] == ["s0", "s1", "batch", "f0", "f1"]
    assert type(a) is SymInt and type(f) is SymFloat and type(hint(g)) is float
    assert env.var_to_val == {"s0": 2, "s1": 3, "batch": 4, "f0": 0.5, "f1": 1.0}
    assert is_symbolic(a) and is_symbolic(f) and is_symbolic(a > b)
    assert not is_symbolic(3) and not is_symbolic(SymInt(SymNode.constant(3)))
    with pytest.raises(ValueError, match="batch"):
        env.create_symbol(1, name="batch")
    env.create_symbol(1, name="s2")
    assert repr(env.create_symbol(1)) == "s3"  # automatic names skip taken ones
    for bad in (2.0, True, "2"):
        with pytest.raises(TypeError):
            env.create_symbol(bad)
    with pytest.raises(TypeError):
        env.create_symfloat("2")


def test_wrappers_check_the_node_kind():
    with pytest.raises(TypeError):
        SymInt(SymNode.constant(2.0))
    with pytest.raises(TypeError):
        SymFloat(SymNode.constant(2))
    with pytest.raises(TypeError):
        SymBool(SymNode.constant(1))
    assert hint(SymInt(SymNode.symbol("n", 4)) + 1) == 5


# ---------------------------------------------------------------------------------------------
# sym_* helpers


def test_sym_max_min_on_plain_values():
    assert sym_max(2, 3) == 3 and type(sym_max(2, 3)) is int
    assert sym_min(2, 3) == 2 and type(sym_min(2, 3)) is int
    assert sym_max(3, 2.0) == 3.0 and type(sym_max(3, 2.0)) is float  # promotes, as PyTorch
    assert sym_min(1, 2.0) == 1.0 and type(sym_min(1, 2.0)) is float
    with pytest.raises(TypeError):
        sym_max("a", 1)
    with pytest.raises(TypeError):
        sym_min(1, None)


@pytest.mark.parametrize(("name", "fn"), [("max", sym_max), ("min", sym_min)])
@pytest.mark.parametrize(("left", "right"), kind_pairs())
def test_sym_max_min_symbolic(name, fn, left, right):
    reference = max if name == "max" else min
    for a, b in value_pairs(left, right):
        env = ShapeEnv()
        result = fn(KINDS[left](env, a), KINDS[right](env, b))
        promoted = float if float in (type(a), type(b)) else int
        assert type(result) is WRAPPER_FOR[promoted]
        assert type(hint(result)) is promoted
        assert hint(result) == reference(a, b)
        assert str(result).startswith(f"{name}(")


def test_sym_max_of_symbols_reevaluates():
    env = ShapeEnv()
    a, b = env.create_symbol(2), env.create_symbol(5)
    m = sym_max(a, b)
    assert str(m) == "max(s0, s1)"
    assert m.node.evaluate({"s0": 9, "s1": 5}) == 9
    with pytest.raises(TypeError):
        sym_max(a, "x")
    with pytest.raises(TypeError):
        sym_max(a > 1, 2)


def test_sym_int_and_sym_float():
    assert sym_int(2.7) == 2 and type(sym_int(2.7)) is int
    assert sym_int(-2.7) == -2  # truncates toward zero
    assert sym_float(3) == 3.0 and type(sym_float(3)) is float
    env = ShapeEnv()
    s, f = env.create_symbol(3), env.create_symfloat(-2.7)
    assert sym_int(s) is s
    assert sym_float(f) is f
    assert type(sym_int(f)) is SymInt and hint(sym_int(f)) == -2
    assert type(sym_float(s)) is SymFloat and hint(sym_float(s)) == 3.0
    assert type(sym_int(s > 2)) is SymInt and hint(sym_int(s > 2)) == 1
    assert type(sym_float(s > 5)) is SymFloat and hint(sym_float(s > 5)) == 0.0
    assert str(sym_float(s)) == "float(s0)" and str(sym_int(f)) == "int(f0)"
    assert env.guards == []


def test_sym_not():
    assert sym_not(True) is False
    assert sym_not(0) is True
    b = ShapeEnv().create_symbol(3) > 2
    assert type(sym_not(b)) is SymBool and hint(sym_not(b)) is False


def test_sym_ite():
    env = ShapeEnv()
    a, b = env.create_symbol(3), env.create_symbol(8)
    assert sym_ite(True, a, b) is a
    assert sym_ite(False, a, b) is b
    assert sym_ite(False, 1, 2) == 2
    with env:
        picked = sym_ite(a > b, a, b)
    assert env.guards == []  # choosing symbolically decides nothing
    assert type(picked) is SymInt and hint(picked) == 8
    assert str(picked) == "s0 if s0 > s1 else s1"
    assert picked.node.evaluate({"s0": 9, "s1": 1}) == 9
    mixed = sym_ite(a < b, a, 2.5)
    assert type(mixed) is SymFloat and hint(mixed) == 3.0
    flag = sym_ite(a < b, a > 1, False)
    assert type(flag) is SymBool and hint(flag) is True
    with pytest.raises(TypeError):
        sym_ite(a < b, "x", 1)
    with pytest.raises(TypeError):
        sym_ite(a < b, a > 1, 2)


def test_sym_sum_plain_falls_back_to_builtin_sum():
    assert sym_sum([1, 2, 3]) == 6 and type(sym_sum([1, 2, 3])) is int
    assert sym_sum(x for x in (0.5, 0.25)) == 0.75
    assert sym_sum([]) == 0


def test_sym_sum_builds_one_node():
    env = ShapeEnv()
    terms = [env.create_symbol(v) for v in (1, 2, 3, 4)]
    total = sym_sum(terms)
    assert type(total) is SymInt and hint(total) == 10
    assert total.node.op == "sym_sum"
    assert [a.node for a in terms] == list(total.node.args)  # flat, not a chain
    assert str(total) == "s0 + s1 + s2 + s3"
    assert total.node.evaluate({"s0": 10, "s1": 20, "s2": 30, "s3": 40}) == 100


def test_sym_sum_folds_int_constants_and_keeps_floats():
    env = ShapeEnv()
    a, b = env.create_symbol(1), env.create_symbol(2)
    total = sym_sum([a, 3, b, 4, True])
    assert hint(total) == 11 and str(total) == "s0 + s1 + 8"
    assert len(total.node.args) == 3
    assert str(sym_sum([a, -3])) == "s0 - 3"
    assert sym_sum([a, 0]).node is a.node
    f = env.create_symfloat(0.5)
    mixed = sym_sum([a, 1.5, f, 2])
    assert type(mixed) is SymFloat and hint(mixed) == sum([1, 1.5, 0.5, 2])
    assert len(mixed.node.args) == 4
    with pytest.raises(TypeError):
        sym_sum([a, "x"])


def test_sym_protocol_methods():
    env = ShapeEnv()
    s = env.create_symbol(3)
    assert hint(s.__sym_max__(5)) == 5 and hint(s.__sym_min__(5)) == 3
    assert s.__sym_int__() is s and type(s.__sym_float__()) is SymFloat
    b = s > 1
    assert hint(b.__sym_not__()) is False
    assert hint(b.__sym_ite__(s, 0)) == 3


# ---------------------------------------------------------------------------------------------
# Text


@pytest.fixture
def syms():
    env = ShapeEnv()
    return env.create_symbol(4), env.create_symbol(3), env.create_symfloat(2.5)


def test_reprs(syms):
    s0, s1, f0 = syms
    cases = [
        (s0 + 2 * s1, "s0 + 2*s1"),
        (s0 - 2, "s0 - 2"),
        (s0 + -2, "s0 - 2"),
        (s0 - (s1 - 1), "s0 - (s1 - 1)"),
        ((s0 + 1) * s1, "(s0 + 1)*s1"),
        (s0 / s1, "s0/s1"),
        (s0 // 2, "s0 // 2"),
        (s0 % s1, "s0 % s1"),
        ((-s0) ** 2, "(-s0)**2"),
        (-(s0**2), "-s0**2"),
        (-(s0 + 1), "-(s0 + 1)"),
        (abs(s0 - s1), "abs(s0 - s1)"),
        (s0 * f0, "s0*f0"),
        (s0 > 2, "s0 > 2"),
        ((s0 > 2) == (s1 > 2), "(s0 > 2) == (s1 > 2)"),
        ((s0 > 2) & (s1 < 2), "s0 > 2 and s1 < 2"),
        (~((s0 > 2) | (s1 < 2)), "not (s0 > 2 or s1 < 2)"),
        (sym_max(s0, 3), "max(s0, 3)"),
        (math.floor(f0), "floor(f0)"),
        (round(f0, 1), "round(f0, 1)"),
    ]
    for expr, text in cases:
        assert repr(expr) == text
        assert str(expr) == text
    assert repr(s0.node) == "SymNode(s0, pytype=int, hint=4)"


def test_text_is_python_with_the_same_value(syms):
    # Every rendering parses back as Python and computes the node's hint.
    s0, s1, f0 = syms
    exprs = [
        s0 - (s1 - 1),
        (s0 - s1) - 1,
        2 ** (s1**2),
        (2**s1) ** 2,
        -(s0 // 3) * s1,
        (s0 * s1) % (s1 + 2),
        (s0 + f0) / (s1 - f0),
        sym_ite(s0 > s1, s0 - 1, s1 * 2) + 1,
        sym_sum([s0 * 2, -s1, sym_max(s0, s1)]),
        ~((s0 > 2) & ((s1 != 3) | (f0 <= 2.5))),
        (s0 < s1) == (s1 < s0),
        sym_min(s0, 1.5) ** 2,
        math.ceil(f0 * s0) - round(f0),
    ]
    namespace = {"s0": 4, "s1": 3, "f0": 2.5, "floor": math.floor, "ceil": math.ceil}
    for expr in exprs:
        assert eval(str(expr), namespace) == hint(expr), str(expr)


def test_deep_expressions_do_not_recurse():
    env = ShapeEnv()
    s0, s1 = env.create_symbol(1), env.create_symbol(2)
    x = s0
    for _ in range(5000):
        x = x + s1
    assert hint(x) == 1 + 5000 * 2
    assert x.node.evaluate({"s0": 0, "s1": 1}) == 5000
    assert str(x).startswith("s0 + s1 + s1")
    with env:
        assert bool(x > 0)
    assert env.evaluate_guards({"s0": 1, "s1": 1})


# ---------------------------------------------------------------------------------------------
# SymNode


def test_node_constants_fold():
    folded = SymNode.constant(2).add(3).mul(4)
    assert folded.is_constant() and folded.hint == 20 and folded.pytype is int
    assert SymNode.constant(7).truediv(2).hint == 3.5
    assert SymNode.constant(True).and_(False).hint is False
    s = SymNode.symbol("n", 4)
    assert not s.is_constant() and s.free_symbols == {"n"}
    expr = s.add(1).mul(SymNode.symbol("m", 2))
    assert expr.free_symbols == {"n", "m"} and expr.hint == 10
    assert expr.is_int() and expr.lt(3).is_bool() and expr.truediv(2).is_float()


def test_node_identities():
    s = SymNode.symbol("n", 4)
    assert s.add(0) is s and SymNode.apply("add", 0, s) is s
    assert s.mul(1) is s and s.sub(0) is s and s.floordiv(1) is s and s.pow(1) is s
    assert s.add(0.0) is not s and s.add(0.0).pytype is float  # the kind changes
    assert s.mul(0).is_constant() and s.mul(0).hint == 0
    assert not s.mul(0.0).is_constant()  # inf * 0.0 is nan, so floats keep the node
    f = SymNode.symbol("x", -0.0)
    assert f.add(0) is not f  # -0.0 + 0 is 0.0: no float identities


def test_node_rejects_mismatched_kinds():
    n, b = SymNode.symbol("n", 4), SymNode.symbol("b", True)
    with pytest.raises(TypeError):
        b.add(1)
    with pytest.raises(TypeError):
        n.and_(b)
    with pytest.raises(TypeError):
        b.lt(True)
    with pytest.raises(TypeError):
        n.sym_ite(1, 2)
    with pytest.raises(TypeError):
        SymNode.constant("3")
    with pytest.raises(TypeError):
        SymNode.symbol("", 3)


def test_node_evaluate_checks_values():
    expr = SymNode.symbol("n", 4).add(SymNode.symbol("x", 0.5))
    assert expr.evaluate({"n": 1, "x": 2}) == 3.0
    with pytest.raises(KeyError, match="'x'"):
        expr.evaluate({"n": 1})


def test_shared_subexpressions_are_visited_once():
    s = SymNode.symbol("n", 3)
    shared = s.mul(s)
    expr = shared.add(shared).sub(shared)
    assert expr.hint == 9 and str(expr) == "n*n + n*n - n*n"
    assert expr.evaluate({"n": 5}) == 25


# ---------------------------------------------------------------------------------------------
# Through the facade


def test_facade_reexports():
    import torch
    import torch._core.symbolic as symbolic

    for name in (
        "SymInt",
        "SymFloat",
        "SymBool",
        "sym_int",
        "sym_float",
        "sym_max",
        "sym_min",
        "sym_sum",
        "sym_not",
        "sym_ite",
    ):
        assert getattr(torch, name) is getattr(symbolic, name), name
    assert torch.sym_max(2, 3) == 3
    assert torch.sym_int(2.7) == 2
    assert torch.sym_not(True) is False
    s = ShapeEnv().create_symbol(4)
    assert isinstance(torch.sym_max(s, 1), torch.SymInt)
    assert isinstance(torch.sym_float(s), torch.SymFloat)
    assert isinstance(s > 1, torch.SymBool)
    assert torch.sym_sum([s, s]).node.op == "sym_sum"
    assert torch.sym_ite(s > 1, 1.0, 2.0).node.hint == 1.0


def test_symbolic_sizes_are_numbers_in_tensor_arithmetic():
    # x * x.shape[0] with a symbolic size: a number operand of the int64 category, as the
    # concrete size would be (the traced graph then runs on other sizes)
    import torch
    from torch._subclasses import FakeTensorMode

    mode = FakeTensorMode(static_shapes=False)
    x = mode.from_tensor(torch.ones(3, 4))
    n, m = x.shape
    assert isinstance(n, SymInt)
    with mode:
        scaled = x * n - m / 2
    assert scaled.dtype == torch.float32 and scaled.shape == x.shape
    assert torch.result_type(torch.ones(2, dtype=torch.int32), n) == torch.int32
    assert torch.result_type(torch.ones(2, dtype=torch.int32), m / 2) == torch.float32
