"""The ``*_copy`` functions: each view op's out-of-place twin (``torch.view_copy``,
``permute_copy``, ``transpose_copy``...), a new contiguous tensor holding the view's elements,
sharing no memory with the input. PyTorch has them for code that must not alias (functional
graphs, export). One row per view: the function's name -> the view method it copies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core.layout import contiguous_format
from .._core.tensor import Tensor
from . import complex_views


def _method(name: str) -> Callable[..., Any]:
    """The view ``input.<name>(*args, **kwargs)``."""
    def view(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, name)(*args, **kwargs)

    return view


def _expand(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    return input.expand(size)  # (implicit: the schema's flag; it changes nothing here)


# name of the copy -> the view it copies
VIEW_COPIES: dict[str, Callable[..., Any]] = {
    **{f"{name}_copy": _method(name) for name in (
        "view", "permute", "transpose", "t", "squeeze", "unsqueeze", "select", "diagonal",
        "as_strided", "detach", "unfold", "split", "split_with_sizes", "unbind", "values",
        "indices")},
    "expand_copy": _expand,
    "alias_copy": lambda input: input.view_as(input),  # an alias views the whole tensor
    "view_as_real_copy": complex_views.view_as_real,
    "view_as_complex_copy": complex_views.view_as_complex,
}


def _copy_of(name: str, view: Callable[..., Any]) -> Any:
    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        result = view(input, *args, **kwargs)
        if isinstance(result, (list, tuple)):
            return [r.clone(memory_format=contiguous_format) for r in result]
        return result.clone(memory_format=contiguous_format)

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = (f"``{name.removesuffix('_copy')}`` of ``input`` as a new contiguous tensor "
                    "that shares no memory with ``input``.")
    return copy


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
               step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim``, as a new contiguous tensor."""
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return input[tuple(index)].clone(memory_format=contiguous_format)


for _name, _view in VIEW_COPIES.items():
    globals()[_name] = _copy_of(_name, _view)
del _name, _view

__all__ = [*VIEW_COPIES, "slice_copy"]
