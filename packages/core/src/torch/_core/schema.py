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
            t = a.type.replace("Tensor", "Tensor(a!)", 1) if a.mutable else a.type
            d = "" if not a.has_default else f"={_fmt_default(a.default)}"
            return f"{t} {a.name}{d}".strip()

        parts: list[str] = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(fmt(a))
        rets = ", ".join(r.type + (f" {r.name}" if r.name else "") for r in self.returns)
        ret = rets if len(self.returns) == 1 else f"({rets})"
        full = f"{self.name}.{self.overload}" if self.overload else self.name
        return f"{full}({', '.join(parts)}) -> {ret}"


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


def _parse_type(text: str) -> tuple[str, bool]:
    """``Tensor(a!)`` -> (``Tensor``, mutable)."""
    if "(" in text:
        head, _, rest = text.partition("(")
        alias, _, tail = rest.partition(")")
        return head + tail, alias.endswith("!")
    return text, False


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
    type_, mutable = _parse_type(type_text.strip())
    return Argument(name.strip(), type_, _parse_default(default.strip()) if eq else _NO_DEFAULT,
                    kwarg_only, mutable)


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
        type_text, _, rname = r.partition(" ")
        type_, mutable = _parse_type(type_text)
        returns.append(Argument(rname.strip(), type_, mutable=mutable))
    return Schema(name, overload, tuple(args), tuple(returns))
