"""Autocast for composite functions: ones written in other ops (``F.mse_loss``) that PyTorch's
autocast lists name as operators.

Kept apart from :mod:`torch.amp.autocast_mode` so that marking a function costs no import of
it: while that module is not loaded no autocast region can be active, and a call costs one
dictionary lookup.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["composite", "mark"]

_MODE_MODULE = "torch.amp.autocast_mode"


def composite(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give the decorated function the autocast policy PyTorch's lists give the operator
    ``name``: inside an autocast region its inputs are cast as that operator's would be, and the
    ops it is written in are not cast again."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        modules = sys.modules

        @functools.wraps(fn)
        def with_policy(*args: Any, **kwargs: Any) -> Any:
            mode = modules.get(_MODE_MODULE)
            if mode is not None:
                state = mode._local
                if state.enabled and not state.excluded:
                    return mode._run_under_policy(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        return with_policy
    return wrap


def mark(namespace: dict[str, Any], functions: Mapping[str, str]) -> None:
    """Give each function ``name`` of ``namespace`` (a module's globals) the policy of the
    operator ``functions[name]`` (:func:`composite`), in place; names the namespace lacks are
    skipped."""
    for name, operator in functions.items():
        fn = namespace.get(name)
        if fn is not None:
            namespace[name] = composite(operator)(fn)
