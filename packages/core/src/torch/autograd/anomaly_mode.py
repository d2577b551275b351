"""Autograd anomaly mode: forward tracebacks for failing backward nodes, and NaN checks.

While anomaly mode is on, every node the graph records keeps the formatted stack of the
forward call that created it (``node.metadata["traceback_"]``, written by the recorder). The
engine calls :func:`on_backward_output` after each node's backward; if ``check_nan`` is on and
a produced gradient holds a NaN, it warns with that forward traceback and raises PyTorch's
``Function 'MulBackward0' returned nan values in its 0th output.`` :func:`on_backward_error`
does the warning part for a backward that raised.

The switch is process-wide, as in PyTorch (``torch.set_anomaly_enabled``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .._core import config as _config
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_anomaly_enabled",
    "set_detect_anomaly",
]

F = TypeVar("F", bound=Callable[..., Any])


def is_anomaly_enabled() -> bool:
    """Whether autograd anomaly detection is on."""
    return bool(_config.state.anomaly)


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also raises on NaN gradients."""
    return bool(_config.state.anomaly_check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    _config.state.anomaly = bool(enabled)
    _config.state.anomaly_check_nan = bool(check_nan)


class _Switch:
    """Restores the anomaly state found at construction (or ``__enter__``) on exit."""

    prev: bool
    prev_check_nan: bool

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class detect_anomaly(_Switch):
    """Context manager (and decorator) that turns anomaly detection on for its block.

    Nodes created inside remember the forward traceback that created them; a backward that
    fails or (``check_nan=True``) returns NaN reports that traceback in a warning.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(True, self.check_nan)

    def __call__(self, fn: F) -> F:
        """Decorator form: anomaly detection is on while ``fn`` runs."""
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            manager = object.__new__(detect_anomaly)  # no second "enabled" warning per call
            manager.check_nan = check_nan
            with manager:
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly(_Switch):
    """Turn anomaly detection on or off: as a function call, or for a ``with`` block (the
    previous state comes back at its end)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass


# -- engine hooks ---------------------------------------------------------------------------


def _node_name(node: Any) -> str:
    name = getattr(node, "name", None)
    return name() if callable(name) else type(node).__name__


def _warn_forward_trace(node: Any) -> None:
    metadata = getattr(node, "metadata", None) or {}
    trace = metadata.get("traceback_")
    name = _node_name(node)
    if trace:
        message = (f"Error detected in {name}. Traceback of forward call that caused the "
                   f"error:\n{trace}")
    else:
        message = (f"Error detected in {name}. No forward pass information available. Enable "
                   "detect anomaly during forward pass for more information.")
    warnings.warn(message, stacklevel=2)


def on_backward_error(node: Any, error: BaseException | None = None) -> None:
    """Engine hook: ``node``'s backward raised ``error``; report the forward traceback."""
    _warn_forward_trace(node)


def on_backward_output(node: Any, grads: Sequence[Any]) -> None:
    """Engine hook, run after each node's backward while anomaly mode is on.

    :param node: the node whose backward ran.
    :param grads: the gradients it produced, one per input edge (``None`` for none).
    :raises RuntimeError: when NaN checking is on and gradient ``i`` contains a NaN.
    """
    if not is_anomaly_check_nan_enabled():
        return
    for i, g in enumerate(grads):
        if not isinstance(g, Tensor) or not (g.is_floating_point() or g.is_complex()):
            continue
        from .._aten.elementwise import isnan

        with no_grad():
            has_nan = bool(isnan(g).any())
        if has_nan:
            _warn_forward_trace(node)
            raise RuntimeError(
                f"Function '{_node_name(node)}' returned nan values in its {i}th output."
            )
