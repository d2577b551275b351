"""``torch.library``'s registrations for other subsystems: a custom op's ``vmap`` rule, its
autocast cast, the lookup of a registered kernel, and triton ops.

Each is written in what the subsystem already has: a vmap rule is a row of the batching rule
table (:data:`torch._functorch.rules.RULES`), an autocast rule a kernel at the ``Autocast``
key that casts as :mod:`torch.amp` does, a kernel lookup the operator's own resolution.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any

from ._core import dispatch as _dispatch

# PyTorch's pattern for a schema written without the operator's name: "(Tensor x) -> Tensor"
NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


class EffectType(enum.Enum):
    """The side effects an operator may be registered with (ordered effects keep their order
    in a traced graph)."""

    ORDERED = "Ordered"


def fallthrough_kernel() -> None:
    """A marker to pass to ``Library.impl``: the operator has no kernel of its own at that
    key, so calls fall through to the keys below it."""
    raise NotImplementedError("fallthrough_kernel is a marker for Library.impl, not a kernel")


# -- vmap ------------------------------------------------------------------------------------

class VmapInfo:
    """What a registered vmap rule learns of the call: the batch size and the ``randomness``
    that ``torch.vmap`` was given."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness

    def __repr__(self) -> str:
        return f"VmapInfo(batch_size={self.batch_size}, randomness={self.randomness!r})"


def _in_dims(ctx: Any, value: Any) -> Any:
    """``0`` for an argument that carries the batch (the physical tensors of a vmap level
    have it first), ``None`` otherwise; lists and tuples element by element."""
    from ._core.tensor import Tensor

    if isinstance(value, Tensor):
        return 0 if ctx.batched(value) else None
    if isinstance(value, (list, tuple)):
        return type(value)(_in_dims(ctx, v) for v in value)
    return None


def _batch_first(ctx: Any, out: Any, out_dims: Any) -> Any:
    """``out`` with each tensor's batch dim moved to the front (or added, for an output the
    rule says is the same for every sample: ``out_dim`` None)."""
    from ._core.tensor import Tensor

    if isinstance(out, Tensor):
        if out_dims is None:
            return ctx.mark(out.unsqueeze(0).expand(ctx.size, *out.shape))
        if not isinstance(out_dims, int):
            raise ValueError(f"vmap rule: out_dims for a Tensor output must be an int or None, "
                             f"got {out_dims!r}")
        return ctx.mark(out.movedim(out_dims, 0))
    if isinstance(out, (list, tuple)):
        dims = out_dims if isinstance(out_dims, (list, tuple)) else [out_dims] * len(out)
        if len(dims) != len(out):
            raise ValueError(f"vmap rule: out_dims has {len(dims)} entries for {len(out)} "
                             "outputs")
        return type(out)(_batch_first(ctx, o, d) for o, d in zip(out, dims))
    return out


def vmap_rule_row(rule: Callable[..., Any]) -> Callable[..., Any]:
    """A batching-table row that runs a user's ``rule(info, in_dims, *args, **kwargs) ->
    (output, out_dims)`` (PyTorch's ``register_vmap`` signature)."""

    def row(ctx: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        in_dims = tuple(_in_dims(ctx, a) for a in args)
        result = rule(VmapInfo(ctx.size, ctx.mode.randomness), in_dims, *args, **kwargs)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(f"vmap rule of {func.qualname} must return (output, out_dims), "
                               f"got {type(result).__name__}")
        return _batch_first(ctx, result[0], result[1])

    return row


def register_vmap(op: _dispatch.Operator, rule: Callable[..., Any]) -> Callable[[], None]:
    """Make ``rule`` the batching rule of ``op``; returns the function that removes it."""
    from torch._functorch import rules

    row = vmap_rule_row(rule)
    previous = rules.RULES.get(op.qualname)
    rules.RULES[op.qualname] = row

    def remove() -> None:
        if rules.RULES.get(op.qualname) is row:
            if previous is None:
                del rules.RULES[op.qualname]
            else:
                rules.RULES[op.qualname] = previous

    return remove


# -- autocast ------------------------------------------------------------------------------

def autocast_kernel(op: _dispatch.Operator, device_type: str,
                    cast_inputs: Any) -> Callable[..., Any]:
    """The ``Autocast`` kernel ``register_autocast`` installs: inside an autocast region for
    ``device_type``, floating tensors on that device are cast to ``cast_inputs`` and the op
    runs with autocast off; elsewhere the call goes on unchanged."""
    from torch.amp import autocast_mode as amp

    def kernel(*args: Any, **kwargs: Any) -> Any:
        loc = amp._local
        if loc.excluded or loc.enabled.get(device_type) is None:
            return _dispatch.redispatch_below_autocast(op, args, kwargs)
        args = tuple(amp._cast(a, device_type, cast_inputs, amp._CASTABLE) for a in args)
        kwargs = {k: amp._cast(v, device_type, cast_inputs, amp._CASTABLE)
                  for k, v in kwargs.items()}
        with amp.autocast(device_type, enabled=False):  # the op runs with autocast off
            return _dispatch.redispatch_below_autocast(op, args, kwargs)

    kernel.__name__ = f"autocast_{op.name}"
    return kernel


# -- kernel lookup -------------------------------------------------------------------------

class SafeKernelFunction:
    """A kernel ``get_kernel`` found: ``call_boxed(keyset, *args, **kwargs)`` runs it (the
    key set is accepted for PyTorch's signature; the kernel was already chosen)."""

    def __init__(self, op: _dispatch.Operator, key: str, kernel: Callable[..., Any]) -> None:
        self.op_handle = op
        self.key = key
        self._kernel = kernel

    def call_boxed(self, keyset: Any, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel on ``args``."""
        return self._kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return f"SafeKernelFunction(op={self.op_handle.qualname}, key={self.key})"


def get_kernel(op: _dispatch.Operator, dispatch_key: Any) -> SafeKernelFunction:
    """The kernel that runs ``op`` for ``dispatch_key`` (a backend key such as ``"CPU"``, or
    a functionality key that has a kernel of its own)."""
    name = getattr(dispatch_key, "name", dispatch_key)
    if not isinstance(name, str):
        raise TypeError(f"get_kernel: dispatch_key must be a string or DispatchKey, got "
                        f"{type(dispatch_key).__name__}")
    key = _dispatch.key_for(name)
    if key in _dispatch.FUNCTIONALITY_KEYS:
        kernel = op.kernels.get(key)
        if kernel is None:
            raise RuntimeError(f"get_kernel: {op.qualname} has no kernel for {key}")
        return SafeKernelFunction(op, key, kernel)
    return SafeKernelFunction(op, key, op.resolve(key))


# -- triton --------------------------------------------------------------------------------

class _TritonLauncher:
    """``wrap_triton(kernel)[grid]``: what would launch a triton kernel."""

    def __init__(self, kernel: Any, grid: Any) -> None:
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.kernel, "__name__", type(self.kernel).__name__)
        raise RuntimeError(
            f"wrap_triton({name}): Plait cannot launch triton kernels (triton compiles for "
            "PyTorch's CUDA runtime). Give the op a kernel written in torch operations with "
            "torch.library.register_kernel, or use torch.library.custom_op.")


class TritonKernelWrapper:
    """What :func:`wrap_triton` returns: indexed by a grid, like a triton kernel."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __getitem__(self, grid: Any) -> _TritonLauncher:
        return _TritonLauncher(self.kernel, grid)

    def run(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        return _TritonLauncher(self.kernel, grid)(*args, **kwargs)


def wrap_triton(triton_kernel: Callable[..., Any], /) -> TritonKernelWrapper:
    """Wrap a triton kernel for a :func:`torch.library.triton_op`. Launching it raises a
    RuntimeError that says why: Plait's devices do not run triton code."""
    if not callable(triton_kernel) and not hasattr(triton_kernel, "__getitem__"):
        raise TypeError(f"wrap_triton: expected a triton kernel, got "
                        f"{type(triton_kernel).__name__}")
    return TritonKernelWrapper(triton_kernel)
