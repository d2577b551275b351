"""Operator schemas: ``"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"``.

The parser understands what ``torch.library`` users write: types (``Tensor``, ``Tensor?``,
``Tensor[]``, ``int``, ``int[]``, ``SymInt``, ``float``, ``bool``, ``str``, ``Scalar``,
``ScalarType``, ``Device``...), alias annotations (``Tensor(a!)`` marks a mutated argument),
defaults, the ``*`` that starts keyword-only arguments, and single, tuple or empty returns.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # without the alias annotation: "Tensor", "int[]", "Tensor?"...
    default: Any = _NO_DEFAULT
    kwarg_only: bool = False
    mutable: bool = False
    alias: str = ""  # the alias annotation as written: "a", "a!", "a -> *" ("" for none)

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def is_tensor(self) -> bool:
        return self.type.startswith("Tensor")


@dataclass(frozen=True)
class Schema:
    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]

    @property
    def mutated(self) -> tuple[int, ...]:
        """Positions of the arguments the op writes to."""
        return tuple(i for i, a in enumerate(self.arguments) if a.mutable)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """All arguments in schema order, defaults filled in; TypeError on a bad call."""
        params = self.arguments
        positional = [a for a in params if not a.kwarg_only]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments but "
                            f"{len(args)} were given")
        out = list(args)
        names = {a.name for a in params}
        unknown = set(kwargs) - names
        if unknown:
            raise TypeError(f"{self.name}() got an unexpected keyword argument "
                            f"'{sorted(unknown)[0]}'")
        for a in params[len(args):]:
            if a.name in kwargs:
                out.append(kwargs[a.name])
            elif a.has_default:
                out.append(a.default)
            else:
                raise TypeError(f"{self.name}() missing required argument '{a.name}'")
        for a in params[: len(args)]:
            if a.name in kwargs:
                raise TypeError(f"{self.name}() got multiple values for argument '{a.name}'")
        return out

    def __str__(self) -> str:
        def fmt(a: Argument) -> str:
            t = _annotated(a)
            d = "" if not a.has_default else f"={_fmt_default(a.default)}"
            return f"{t} {a.name}{d}".strip()

        parts: list[str] = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(fmt(a))
        rets = ", ".join(_annotated(r) + (f" {r.name}" if r.name else "") for r in self.returns)
        ret = rets if len(self.returns) == 1 else f"({rets})"
        full = f"{self.name}.{self.overload}" if self.overload else self.name
        return f"{full}({', '.join(parts)}) -> {ret}"


def _annotated(a: Argument) -> str:
    """The argument's type with its alias annotation put back: ``Tensor(a!)``, ``Tensor(a)[]``."""
    alias = a.alias or ("a!" if a.mutable else "")
    return a.type.replace("Tensor", f"Tensor({alias})", 1) if alias else a.type


def _fmt_default(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def _split(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _parse_type(text: str) -> tuple[str, bool, str]:
    """``Tensor(a!)`` -> (``Tensor``, mutable, the annotation ``a!``)."""
    if "(" in text:
        head, _, rest = text.partition("(")
        alias, _, tail = rest.partition(")")
        alias = alias.strip()
        return head + tail, alias.endswith("!"), alias
    return text, False, ""


def _parse_default(text: str) -> Any:
    table = {"True": True, "False": False, "None": None}
    if text in table:
        return table[text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # enum-like names such as `contiguous_format`
    return list(value) if isinstance(value, (list, tuple)) else value


def _parse_arg(text: str, kwarg_only: bool) -> Argument:
    decl, eq, default = text.partition("=")
    type_text, _, name = decl.strip().rpartition(" ")
    if not type_text:
        raise ValueError(f"schema argument '{text}' needs a type and a name")
    type_, mutable, alias = _parse_type(type_text.strip())
    return Argument(name.strip(), type_, _parse_default(default.strip()) if eq else _NO_DEFAULT,
                    kwarg_only, mutable, alias)


def _split_return(text: str) -> tuple[str, str]:
    """A return's type and name: ``Tensor(a -> *) values`` -> (``Tensor(a -> *)``,
    ``values``); the annotation may hold spaces."""
    text = text.strip()
    close = text.rfind(")")
    split_at = text.find(" ", close + 1 if close >= 0 else 0)
    if split_at < 0:
        return text, ""
    return text[:split_at], text[split_at:].strip()


def parse(schema: str) -> Schema:
    """Parse a schema string; ``ValueError`` with the offending text on a malformed one."""
    head, paren, rest = schema.partition("(")
    if not paren or "->" not in rest:
        raise ValueError(f"malformed schema (expected 'name(args) -> returns'): {schema!r}")
    args_text, _, ret_text = rest.rpartition("->")
    args_text = args_text.strip()
    if not args_text.endswith(")"):
        raise ValueError(f"malformed schema (unbalanced parentheses): {schema!r}")
    name, _, overload = head.strip().partition(".")
    if not name.replace("_", "a").replace("::", "").isalnum():
        raise ValueError(f"malformed schema (bad operator name {name!r}): {schema!r}")
    args: list[Argument] = []
    kwarg_only = False
    for part in _split(args_text[:-1]):
        if part == "*":
            kwarg_only = True
            continue
        args.append(_parse_arg(part, kwarg_only))
    ret_text = ret_text.strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        ret_parts = _split(ret_text[1:-1])
    else:
        ret_parts = [ret_text]
    returns = []
    for r in ret_parts:
        type_text, rname = _split_return(r)
        type_, mutable, alias = _parse_type(type_text)
        returns.append(Argument(rname, type_, mutable=mutable, alias=alias))
    return Schema(name, overload, tuple(args), tuple(returns))


# --- PyTorch's view of a schema (``OpOverload._schema``: torch._C.FunctionSchema) ---------
# Libraries read a schema through PyTorch's names: ``schema.name`` is "aten::add",
# ``arguments[i].type`` a type object printing as TorchScript spells it ("List[int]",
# "Optional[Tensor]", "number" for Scalar), ``alias_info.is_write`` marks a written argument.
# The table below is the base-type spelling; "?" and "[]" wrap it in Optional/List.

_JIT_BASE: dict[str, tuple[str, str]] = {  # schema type -> (printed name, type class name)
    "Tensor": ("Tensor", "TensorType"),
    "int": ("int", "IntType"),
    "SymInt": ("int", "IntType"),
    "float": ("float", "FloatType"),
    "SymFloat": ("float", "FloatType"),
    "bool": ("bool", "BoolType"),
    "SymBool": ("bool", "BoolType"),
    "str": ("str", "StringType"),
    "Dimname": ("str", "StringType"),
    "Scalar": ("number", "NumberType"),
    "ScalarType": ("int", "IntType"),
    "Layout": ("int", "IntType"),
    "MemoryFormat": ("int", "IntType"),
    "Device": ("Device", "DeviceObjType"),
    "Generator": ("Generator", "GeneratorType"),
    "Storage": ("Storage", "StorageType"),
    "Stream": ("Stream", "StreamObjType"),
    "Any": ("Any", "AnyType"),
}


class JitType:
    """An argument's type as PyTorch's schema objects give it (``str()`` is TorchScript's
    spelling; ``kind()`` the type class, such as ``"TensorType"``)."""

    __slots__ = ("_element", "_kind", "_name")

    def __init__(self, kind: str, name: str, element: JitType | None = None) -> None:
        self._kind = kind
        self._name = name
        self._element = element

    def kind(self) -> str:
        """The type class's name: ``TensorType``, ``OptionalType``, ``ListType``..."""
        return self._kind

    def getElementType(self) -> JitType:
        """The element type of an ``Optional``/``List`` type."""
        if self._element is None:
            raise RuntimeError(f"{self._name} has no element type")
        return self._element

    def isSubtypeOf(self, other: JitType) -> bool:
        """Whether a value of this type is one of ``other`` (equal, or ``other`` optional
        of it, or ``other`` is ``Any``)."""
        return (self == other or other._kind == "AnyType"
                or (other._kind == "OptionalType" and self.isSubtypeOf(other.getElementType())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JitType) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __str__(self) -> str:
        return self._name

    __repr__ = __str__


# One class per kind, named as PyTorch's (``isinstance(t, torch.TensorType)``-style checks
# and printing ``type(arg.type).__name__`` see "TensorType", "ListType"...).
JIT_TYPE_CLASSES: dict[str, type[JitType]] = {
    kind: type(kind, (JitType,), {"__slots__": (), "__doc__": f"PyTorch's ``{kind}``."})
    for kind in {k for _, k in _JIT_BASE.values()} | {"OptionalType", "ListType", "ClassType"}
}


def _make_type(kind: str, name: str, element: JitType | None = None) -> JitType:
    return JIT_TYPE_CLASSES[kind](kind, name, element)


def jit_type(text: str) -> JitType:
    """The :class:`JitType` of a schema type (``"int[2]?"`` -> ``Optional[List[int]]``)."""
    if text.endswith("?"):
        inner = jit_type(text[:-1])
        return _make_type("OptionalType", f"Optional[{inner}]", inner)
    if text.endswith("]"):
        inner = jit_type(text[: text.rindex("[")])
        return _make_type("ListType", f"List[{inner}]", inner)
    name, kind = _JIT_BASE.get(text, (text, "ClassType"))
    return _make_type(kind, name)


@dataclass(frozen=True)
class AliasInfo:
    """An argument's alias annotation: ``Tensor(a!)`` is ``before_set={"a"}``, written."""

    is_write: bool
    before_set: frozenset[str]
    after_set: frozenset[str]


def _alias_info(arg: Argument) -> AliasInfo | None:
    alias = arg.alias or ("a!" if arg.mutable else "")
    if not alias:
        return None
    before, _, after = alias.rstrip("!").partition("->")
    before_set = frozenset(before.strip().split("|"))
    after_set = frozenset(after.strip().split("|")) if after else before_set
    if arg.type.endswith("]"):  # Tensor(a)[]: the annotation is the elements'
        return AliasInfo(alias.endswith("!"), frozenset(), frozenset())
    return AliasInfo(alias.endswith("!"), before_set, after_set)


class SchemaArgument:
    """One argument or return of a :class:`FunctionSchema` (PyTorch's ``torch._C.Argument``);
    the attributes of Plait's own :class:`Argument` stay readable through it."""

    __slots__ = ("_arg", "alias_info", "is_out", "type")

    def __init__(self, arg: Argument, is_out: bool = False) -> None:
        self._arg = arg
        self.type = jit_type(arg.type)
        self.alias_info = _alias_info(arg)
        self.is_out = is_out

    @property
    def name(self) -> str:
        return self._arg.name

    @property
    def kwarg_only(self) -> bool:
        return self._arg.kwarg_only

    @property
    def default_value(self) -> Any:
        """The default (None when there is none, as PyTorch's)."""
        return self._arg.default if self._arg.has_default else None

    @property
    def N(self) -> int | None:
        """The fixed length of a list type (``int[2]``), else None."""
        text = self._arg.type.rstrip("?")
        if text.endswith("]") and text[text.rindex("[") + 1:-1].isdigit():
            return int(text[text.rindex("[") + 1:-1])
        return None

    def has_default_value(self) -> bool:
        """Whether the argument has a default."""
        return self._arg.has_default

    def __getattr__(self, name: str) -> Any:
        return getattr(self._arg, name)

    def __str__(self) -> str:
        text = _annotated(self._arg)
        default = f"={_fmt_default(self._arg.default)}" if self._arg.has_default else ""
        return f"{text} {self._arg.name}{default}".strip()

    __repr__ = __str__


class FunctionSchema:
    """PyTorch's face of an operator's :class:`Schema` (``OpOverload._schema``): the name
    with its namespace, ``overload_name``, ``arguments``/``returns`` as
    :class:`SchemaArgument`, ``is_mutable``; other attributes are the schema's own."""

    __slots__ = ("_namespace", "_schema", "arguments", "returns")

    def __init__(self, namespace: str, schema: Schema) -> None:
        self._schema = schema
        self._namespace = namespace
        # out= arguments: written keyword-only arguments that a return aliases
        written_returns = {r.alias for r in schema.returns if r.mutable}
        self.arguments = [SchemaArgument(a, a.kwarg_only and a.mutable and
                                         (a.alias or "a!") in (written_returns or {"a!"}))
                          for a in schema.arguments]
        self.returns = [SchemaArgument(r) for r in schema.returns]

    @property
    def name(self) -> str:
        return f"{self._namespace}::{self._schema.name}" if self._namespace else \
            self._schema.name

    @property
    def overload_name(self) -> str:
        return self._schema.overload

    @property
    def is_mutable(self) -> bool:
        """Whether the operator writes any of its arguments."""
        return any(a.mutable for a in self._schema.arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._schema, name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionSchema) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        text = str(self._schema)
        return f"{self._namespace}::{text}" if self._namespace else text

    __repr__ = __str__
