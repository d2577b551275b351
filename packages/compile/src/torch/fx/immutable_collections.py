"""``torch.fx.immutable_collections``: the list and dict types a node's arguments are kept in.

A node's ``args`` and ``kwargs`` are read by passes that must not change them in place (a
change has to go through ``node.args = ...`` so that the users of every node stay right), so
the lists and dicts inside them are these read-only kinds. They are hashable, as PyTorch's are,
so arguments can be dictionary keys.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["immutable_dict", "immutable_list"]


def _read_only(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise NotImplementedError(f"'{type(self).__name__}' object does not support mutation. "
                              "If you are trying to modify the kwargs of an FX node, you need "
                              "to set node.args or node.kwargs to a new value")


class immutable_list(list):
    """A list whose contents cannot change after it is made."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> Any:
        return (immutable_list, (list(self),))


class immutable_dict(dict):
    """A dict whose contents cannot change after it is made."""

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> Any:
        return (immutable_dict, (dict(self),))
