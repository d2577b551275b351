"""The ``*_copy`` functions: each view op's out-of-place twin (``torch.view_copy``,
``permute_copy``, ``transpose_copy``...), a new contiguous tensor holding the view's elements,
sharing no memory with the input. PyTorch has them for code that must not alias (functional
graphs, export). One row per view: the function's name -> the view method it copies."""

from __future__ import annotations

from typing import Any

from .._core.layout import contiguous_format
from .._core.tensor import Tensor

# name of the copy -> the Tensor view method it copies
VIEW_COPIES: dict[str, str] = {
    "view_copy": "view",
    "permute_copy": "permute",
    "transpose_copy": "transpose",
    "t_copy": "t",
    "squeeze_copy": "squeeze",
    "unsqueeze_copy": "unsqueeze",
    "expand_copy": "expand",
    "select_copy": "select",
    "diagonal_copy": "diagonal",
    "as_strided_copy": "as_strided",
    "detach_copy": "detach",
    "alias_copy": "view_as",  # (an alias is a view of the whole tensor)
    "unfold_copy": "unfold",
    "split_copy": "split",
    "split_with_sizes_copy": "split_with_sizes",
    "unbind_copy": "unbind",
    "view_as_real_copy": "view_as_real",
    "view_as_complex_copy": "view_as_complex",
    "values_copy": "values",
    "indices_copy": "indices",
}


def _copy_of(name: str, view: str) -> Any:
    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if view == "view_as":
            args = (input,)
        elif view == "expand":
            kwargs.pop("implicit", None)  # (the schema's flag; it changes nothing here)
        fn = getattr(input, view, None)
        if fn is None:  # view_as_real/_complex are torch functions, not methods
            from . import complex_views

            fn = getattr(complex_views, view)
            result = fn(input, *args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        if isinstance(result, (list, tuple)):
            return [r.clone(memory_format=contiguous_format) for r in result]
        return result.clone(memory_format=contiguous_format)

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = (f"``input.{view}(...)`` as a new contiguous tensor that shares no memory "
                    "with ``input``.")
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
