"""``torch.nn.utils.stateless.functional_call``: call a module with some of its parameters and
buffers replaced by given tensors, as PyTorch does.

The module's own tensors are swapped out for the call and swapped back afterwards, also when
the call raises. ``torch.func.functional_call`` is the same function, accepting a sequence of
dicts as well; this older entry point is deprecated in PyTorch (a ``FutureWarning``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from torch import Tensor
from torch.nn.modules.module import Module

__all__ = ["functional_call"]

# Marks a name that the module did not have before the call: restoring deletes it.
_MISSING: Any = object()


def _untie_named_tensors_map(module: Module,
                             parameters_and_buffers: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Extend ``parameters_and_buffers`` to every name of a tied tensor: a module whose
    ``b.weight`` is ``a.weight`` gets the new ``a.weight`` under both names.

    :raises ValueError: two names of one tied tensor were given different tensors.
    """
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    names_of: dict[int, set[str]] = {}
    for name, tensor in named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names_of[id(tensor)] for name, tensor in named.items()
            if len(names_of[id(tensor)]) > 1}

    given = set(parameters_and_buffers.keys())
    for name in given & set(tied):
        given_tied = tied[name] & given
        values = {id(parameters_and_buffers[n]) for n in given_tied}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys "
                             f"{sorted(given_tied)}, which are tied. Consider using "
                             "tie_weights=False")

    untied = dict(parameters_and_buffers)
    for name in given & set(tied):
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _owner(module: Module, name: str) -> tuple[Module, str]:
    """The submodule that holds dotted ``name``, and the last component."""
    path, _, leaf = name.rpartition(".")
    owner = module
    if path:
        for item in path.split("."):
            child = getattr(owner, item, None)
            if not isinstance(child, Module):
                raise AttributeError(f"{owner._get_name()} has no attribute `{item}`")
            owner = child
    return owner, leaf


def _swap_tensor(module: Module, name: str, value: Any) -> Any:
    """Put ``value`` at dotted ``name`` in ``module`` (``_MISSING``: delete it); return what
    was there (``_MISSING`` when nothing was)."""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    owner, leaf = _owner(module, name)
    if leaf == "":
        raise KeyError('tensor name can\'t be empty string ""')
    if leaf in owner._parameters:
        old = owner._parameters[leaf]
    elif leaf in owner._buffers:
        old = owner._buffers[leaf]
    else:
        old = getattr(owner, leaf, _MISSING)
        if old is not _MISSING and old is not None and not isinstance(old, Tensor):
            raise TypeError(f"attribute `{leaf}`: {old} is not an instance of torch.Tensor")
    # Write into the tables directly: ``Module.__setattr__`` would refuse a plain tensor (or
    # one that requires grad through a graph) in place of a parameter.
    if value is _MISSING:
        if hasattr(owner, leaf):
            delattr(owner, leaf)
    elif leaf in owner._parameters:
        owner._parameters[leaf] = value
    elif leaf in owner._buffers:
        owner._buffers[leaf] = value
    else:
        setattr(owner, leaf, value)  # a parametrized tensor: its right_inverse stores it
    return old


def _check_keys(module: Module, keys: set[str]) -> None:
    """``strict``: the keys must be exactly the module's parameter and buffer names."""
    valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(keys - valid)
    missing = sorted(valid - keys)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" +
                           "\n\t".join(errors))


@contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: Mapping[str, Tensor],
                          tie_weights: bool = False, strict: bool = False) -> Iterator[None]:
    """Swap the given tensors into ``module`` for the duration of the block."""
    if tie_weights:
        tensors = _untie_named_tensors_map(module, parameters_and_buffers)
    else:
        tensors = {name: parameters_and_buffers[name] for name in parameters_and_buffers.keys()}
    if strict:
        _check_keys(module, set(tensors))
    originals: dict[str, Any] = {}
    try:
        for name, value in tensors.items():
            old = _swap_tensor(module, name, value)
            originals[name] = old
        yield
    finally:
        # Restore in reverse order, so that a name swapped twice (through a tie) ends with
        # the first original.
        for name, old in reversed(list(originals.items())):
            _swap_tensor(module, name, old)


def _functional_call(module: Module, parameters_and_buffers: Mapping[str, Tensor],
                     args: Any = None, kwargs: dict[str, Any] | None = None, *,
                     tie_weights: bool = True, strict: bool = False) -> Any:
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` replaced by the given tensors, then put the module's own back
    (also when the call raises).

    ``args``: a tuple of positional arguments, or a single one. ``tie_weights``: a tensor
    given for one name of tied parameters (``b.weight is a.weight``) replaces all of them.
    ``strict``: the names must be exactly the module's parameters and buffers.
    A buffer updated in place during the call (BatchNorm's running statistics) updates the
    tensor that was passed in. Deprecated in PyTorch in favour of
    :func:`torch.func.functional_call`.
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
