"""``torch.amp.GradScaler``: loss scaling for mixed-precision training, as in PyTorch.

The loss is multiplied by a scale before backward so small float16 gradients do not flush to
zero; ``step`` divides the gradients back (``unscale_``) and skips the optimizer step when any
of them is inf or NaN; ``update`` halves the scale after such a step and doubles it after
``growth_interval`` clean steps. A disabled scaler passes everything through, which is what a
scaler made for a device that is not available becomes (with PyTorch's warning).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from typing import Any

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is between two ``update()`` calls (PyTorch's names: libraries read
    ``scaler._per_optimizer_states[id(optimizer)]["stage"]``)."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    """An optimizer's state after ``update()``: ready, no overflow seen on any device."""
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale losses, unscale gradients, skip steps whose gradients overflowed."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        import torch

        self._device = device
        self._enabled = enabled
        if enabled and device != "cpu" and not torch.get_device_module(device).is_available():
            warnings.warn(f"torch.{device}.amp.GradScaler is enabled, but {device.upper()} is "
                          "not available.  Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._scale_value = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        # id(optimizer) -> its stage and, per device, a 0-d tensor that is 1.0 when a
        # gradient there overflowed (PyTorch's layout, which libraries read)
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(
            _refresh_per_optimizer_state)

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False when disabled or its device is unavailable)."""
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested sequences of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, Iterable) and not hasattr(outputs, "shape"):
            return [self.scale(o) for o in outputs]
        return outputs * self._scale_value

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer_states[id(optimizer)]

    @staticmethod
    def _found_inf(state: dict[str, Any]) -> bool:
        return any(bool(flag.item()) for flag in state["found_inf_per_device"].values())

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place) and note whether any is
        inf or NaN; once per optimizer between updates."""
        if not self._enabled:
            return
        import torch

        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = 1.0 / self._scale_value
        per_device = state["found_inf_per_device"]
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inverse)
                    flag = per_device.get(p.grad.device)
                    if flag is None:
                        flag = per_device[p.grad.device] = torch.zeros((), device=p.grad.device)
                    # counted on the device: reading each gradient's check on the host waited
                    # for the device's queue once per parameter (PyTorch reads once, in step)
                    flag.add_(torch.isfinite(p.grad).all().logical_not())
            for flag in per_device.values():
                flag.clamp_(max=1.0)  # PyTorch's flag: 1.0 after an overflow, else 0.0
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done), then ``optimizer.step(*args, **kwargs)`` unless a gradient
        overflowed; returns what the step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None if self._found_inf(state) else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: float | Any = None) -> None:
        """Set the scale for the next iteration: ``new_scale`` when given, else backed off
        after an overflow and grown after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale_value = float(new_scale)
        else:
            flags = [flag for state in self._per_optimizer_states.values()
                     for flag in state["found_inf_per_device"].values()]
            if not flags:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(bool(flag.item()) for flag in flags):
                self._scale_value *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale_value *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale_value if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after an overflow."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale shrinks by after an overflow."""
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """How many clean steps grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many clean steps grow the scale."""
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """The scaler's settings and scale (empty when disabled), as PyTorch's keys."""
        if not self._enabled:
            return {}
        return {"scale": self._scale_value, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale_value = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
