"""Activation checkpointing: keep a function's inputs, recompute its activations in backward.

:func:`checkpoint` runs ``function`` under :class:`torch.autograd.graph.saved_tensors_hooks`
whose pack hook stores only a position, so the graph keeps no activations of its own. When
backward first needs one of them, the function is run once more with the random-number state
it saw in the forward (CPU generator, and the generators of the devices its tensor arguments
live on) and grad enabled; the recomputation saves the same tensors in the same order, and the
``i``-th of them answers the ``i``-th position. The graph is the ordinary one (an op in the
function gives its usual ``grad_fn``), so ``torch.autograd.grad``, ``inputs=`` and parameters
captured by the function all work.

``use_reentrant=True`` is accepted and runs the same implementation (PyTorch's reentrant
variant exists for historical reasons and is the less capable one), except where the two
differ in what they compute: with no input that requires grad, the reentrant variant warns
and gives nothing inside a gradient, as PyTorch's does. ``use_reentrant=None`` warns as
PyTorch 2.13 does.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
from torch.autograd.graph import saved_tensors_hooks

__all__ = ["CheckpointError", "DefaultDeviceType", "check_backward_validity", "checkpoint",
           "checkpoint_sequential", "detach_variable", "get_device_states", "noop_context_fn",
           "set_device_states"]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not match the original forward."""


_Contexts = tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]


def noop_context_fn() -> _Contexts:
    """The default ``context_fn``: no extra context for the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# -- random-number state -------------------------------------------------------------------


def _tensors_in(args: Iterable[Any]) -> Iterator[torch.Tensor]:
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _tensors_in(a)
        elif isinstance(a, dict):
            yield from _tensors_in(a.values())


class _RngState:
    """The CPU generator's state and those of the accelerators the arguments live on."""

    def __init__(self, args: Iterable[Any]) -> None:
        self.cpu = torch.get_rng_state()
        self.devices: list[tuple[Any, torch.device, Any]] = []
        seen = set()
        for t in _tensors_in(args):
            if t.is_cpu or t.device in seen:
                continue
            seen.add(t.device)
            module = torch.get_device_module(t.device)
            get_state = getattr(module, "get_rng_state", None)
            if get_state is not None:
                self.devices.append((module, t.device, get_state(t.device)))

    def restore(self) -> None:
        torch.set_rng_state(self.cpu)
        for module, device, state in self.devices:
            module.set_rng_state(state, device)


class DefaultDeviceType:
    """The accelerator type whose generator state checkpointing saves when no argument says
    (PyTorch's default is "cuda")."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default accelerator type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default accelerator type."""
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args: Any) -> str:
    types = {t.device.type for t in _tensors_in(args) if t.device.type not in ("cpu", "meta")}
    if len(types) > 1:
        warnings.warn("Tensor arguments, excluding CPU tensors, are detected on at least two "
                      f"types of devices ({sorted(types)}): only the first device type's "
                      "random-number state is saved.", stacklevel=3)
    return sorted(types)[0] if types else DefaultDeviceType.get_device_type()


def get_device_states(*args: Any) -> tuple[list[int], list[Any]]:
    """The indices of the accelerators the tensors in ``args`` live on (CPU and meta tensors
    aside), and each one's random-number state (what a checkpoint restores before it runs
    the function again)."""
    device_ids: list[int] = []
    for t in _tensors_in(args):
        if t.device.type not in ("cpu", "meta") and t.get_device() not in device_ids:
            device_ids.append(t.get_device())
    if not device_ids:
        return [], []
    module = torch.get_device_module(_infer_device_type(*args))
    return device_ids, [module.get_rng_state(index) for index in device_ids]


def set_device_states(devices: list[int], states: list[Any], *,
                      device_type: str | None = None) -> None:
    """Restore the random-number states :func:`get_device_states` returned."""
    if not devices:
        return
    module = torch.get_device_module(device_type or DefaultDeviceType.get_device_type())
    for index, state in zip(devices, states):
        module.set_rng_state(state, index)


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The tensors of ``inputs`` detached, each keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for value in inputs:
        if not isinstance(value, torch.Tensor):
            out.append(value)
            continue
        detached = value.detach()
        detached.requires_grad = value.requires_grad
        out.append(detached)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor input requires grad (the checkpointed part then gets no
    gradients)."""
    if not any(isinstance(value, torch.Tensor) and value.requires_grad for value in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


@contextlib.contextmanager
def _forked_rng(state: _RngState | None) -> Iterator[None]:
    """Run the block with the generators set to ``state``; put the current ones back after."""
    if state is None:
        yield
        return
    current = _RngState(())
    current.devices = [(m, d, m.get_rng_state(d)) for m, d, _ in state.devices]
    state.restore()
    try:
        yield
    finally:
        current.restore()


# -- the non-reentrant implementation ------------------------------------------------------


class _Frame:
    """One checkpointed call: what is needed to run it again, and its recomputed tensors."""

    def __init__(self, function: Callable[..., Any], args: tuple, kwargs: dict,
                 rng: _RngState | None, recompute_context: Any,
                 determinism_check: str) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng = rng
        self.recompute_context = recompute_context
        self.determinism_check = determinism_check
        # the inputs are kept as they are; their versions tell whether they changed since
        self.versions = [(t, t._version) for t in _tensors_in((args, kwargs))]
        self.saved_meta: list[tuple[Any, ...]] = []  # shape, dtype, device per saved tensor
        self.recomputed: list[torch.Tensor] | None = None

    def pack(self, t: torch.Tensor) -> int:
        self.saved_meta.append((tuple(t.shape), t.dtype, t.device))
        return len(self.saved_meta) - 1

    def unpack(self, index: int) -> torch.Tensor:
        if self.recomputed is None:
            self.recomputed = self.recompute()
        return self.recomputed[index]

    def recompute(self) -> list[torch.Tensor]:
        for t, version in self.versions:
            if t._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{t.type()} {list(t.shape)}], which is an input "
                    f"of a checkpointed function, is at version {t._version}; expected version "
                    f"{version} instead."
                )
        recomputed: list[torch.Tensor] = []

        def pack(t: torch.Tensor) -> None:
            recomputed.append(t.detach())

        def unpack(_: None) -> torch.Tensor:
            raise CheckpointError(
                "torch.utils.checkpoint: the recomputed graph was differentiated; this is not "
                "supported."
            )

        with _forked_rng(self.rng), torch.enable_grad(), self.recompute_context, \
                saved_tensors_hooks(pack, unpack):
            self.function(*self.args, **self.kwargs)
        self._check(recomputed)
        return recomputed

    def _check(self, recomputed: list[torch.Tensor]) -> None:
        if len(recomputed) != len(self.saved_meta):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.saved_meta)}\n"
                f"Number of tensors saved during recomputation: {len(recomputed)}"
            )
        if self.determinism_check == "none":
            return
        for i, (t, meta) in enumerate(zip(recomputed, self.saved_meta)):
            now = (tuple(t.shape), t.dtype, t.device)
            if now != meta:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n"
                    f"tensor at position {i}:\nsaved metadata: "
                    f"{{'shape': {meta[0]}, 'dtype': {meta[1]}, 'device': {meta[2]}}}\n"
                    f"recomputed metadata: "
                    f"{{'shape': {now[0]}, 'dtype': {now[1]}, 'device': {now[2]}}}"
                )


def _checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                  context_fn: Callable[[], Any], determinism_check: str,
                                  args: tuple, kwargs: dict) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got "
            f"{determinism_check}"
        )
    rng = _RngState((args, kwargs)) if preserve_rng_state else None
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, rng, recompute_context, determinism_check)

    def pack(t: torch.Tensor) -> tuple[_Frame, int]:
        return frame, frame.pack(t)

    def unpack(handle: tuple[_Frame, int]) -> torch.Tensor:
        owner, index = handle
        return owner.unpack(index)

    with forward_context, saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


# -- public API ------------------------------------------------------------------------------


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward.

    Backward runs ``function`` again (with the random-number state of the forward when
    ``preserve_rng_state=True``, the default) to get them back, trading compute for memory.

    :param use_reentrant: pass it explicitly; ``None`` warns (as PyTorch 2.13 does). Both
        values run the non-reentrant implementation.
    :param context_fn: returns two context managers, for the forward and for the
        recomputation.
    :param determinism_check: ``"default"`` compares shapes, dtypes and devices of the
        recomputed tensors with the forward's; ``"none"`` only their number.
    :returns: what ``function`` returns.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
            "will raise an exception. use_reentrant=False is recommended, but if you need to "
            "preserve the current default behavior, you can pass use_reentrant=True. Refer to "
            "docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
            # PyTorch's reentrant checkpoint is an autograd Function of its inputs alone:
            # with none that requires grad, nothing inside gets a gradient
            check_backward_validity(args)
            with torch.no_grad():
                return function(*args)
    return _checkpoint_without_reentrant(function, bool(preserve), context_fn,
                                         determinism_check, args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of functions (or an ``nn.Sequential``) in ``segments`` chunks, all but
    the last checkpointed.

    :returns: the output of the last function.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    # an nn.Sequential (core does not import torch.nn): its children in order
    children = getattr(functions, "children", None)
    functions = list(children()) if callable(children) else list(functions)

    def run_function(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
