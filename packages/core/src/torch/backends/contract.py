"""The public backend contract: everything a backend plugin may use from core.

A backend (in-tree or a vendor's) imports ``torch``, ``torch.library``,
``torch.backends.hookspecs``, ``torch.backends.devicekit`` and this module, and nothing whose
name starts with an underscore. Everything here is stable across minor versions of plait-core;
the private modules behind it are not. PyTorch has no such module (its C++ backends include
ATen headers); this is Plait's equivalent of that header set for Python backends.

What a kernel may use:

* **Primitives.** :data:`PRIMITIVES` names them; :func:`schema` gives one's signature (outputs
  first, marked ``Tensor(a!)``); :func:`primitive` is the dispatching operator, to call another
  primitive from a kernel (it runs the kernel registered for the operands' device).
* **The reference kernel.** :func:`reference` is core's numpy kernel of a primitive, for the
  CPU: a CPU kernel calls it for a case its native code does not take.
* **Composites.** :func:`composite` is core's backend-independent kernel of an ``aten``
  operator, for a fused kernel that overrides the operator and leaves a case to it. The
  ``check_*`` functions are the argument checks those composites run, for fused kernels that
  must raise PyTorch's errors before their own code runs.
* **Planning.** A kernel decorated with :func:`plannable` is asked once per call signature
  for a kernel specialised to it (the checks and layout work done once), which the dispatcher
  calls for that signature's later calls; a planner marked ``native`` promises kernels that
  call no operator, run without the recording switch around them.
* **Declining a case.** A kernel decorated with :func:`may_decline` may raise :class:`Decline`
  (before it writes anything): the dispatcher then runs what would serve the call without
  that kernel: the kernel it overrode under the same key (the reference kernel, for a CPU
  backend), else the operator's composite, else the CPU fallback (inputs copied to the host,
  the CPU kernel run, results copied back). Undecorated kernels cost nothing extra.
* **Memory.** :func:`data_ptr` is the address of a tensor's first element (the storage's
  address plus the storage offset in bytes); :func:`memory` is the allocator handle the
  backend itself returned and that byte offset, for backends whose memory the host cannot
  address; :func:`empty` allocates an uninitialised contiguous output on any device, and
  :func:`empty_elementwise` one laid out as PyTorch's elementwise kernels lay theirs out,
  :func:`allocator` a planned kernel's outputs (layouts resolved once) with their addresses;
  a kernel that writes an argument in place calls :func:`bump_version` on it.
* **Dtypes.** :data:`DTYPE_NAMES` in a fixed order, :func:`dtype` by name, and
  :func:`dtype_codes` to number the dtypes a native library knows.

Random generators of every device are core's (:mod:`torch.backends.devicekit` exposes them
to device modules); a random kernel receives ``(seed, offset)`` arguments, never a generator.
A kernel that overrides a composite sampler takes its counters with :func:`reserve_counters`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .._core.alloc import (
    kernel_output as _kernel_output,
    outputs_allocator as _outputs_allocator,
)
from .._core.dispatch import Decline
from .hookspecs import (
    ENTRY_POINT_GROUP,
    Allocator,
    BackendInfo,
    Copier,
    FastPath,
    hookimpl,
)

__all__ = [
    "DTYPE_NAMES",
    "ENTRY_POINT_GROUP",
    "PRIMITIVES",
    "Allocator",
    "BackendInfo",
    "Copier",
    "Decline",
    "FastPath",
    "allocator",
    "bump_version",
    "check_convolution_backward",
    "check_fused_adam",
    "check_fused_adam_rows",
    "check_layer_norm",
    "check_scaled_dot_product_attention",
    "composite",
    "data_ptr",
    "dtype",
    "dtype_codes",
    "empty",
    "empty_elementwise",
    "hookimpl",
    "may_decline",
    "memory",
    "plannable",
    "primitive",
    "reference",
    "reserve_counters",
    "schema",
    "table_version",
]

Kernel = Callable[..., Any]
K = TypeVar("K", bound=Callable[..., Any])

# The dtypes core knows, in the order of their codes in core's own tables.
DTYPE_NAMES: tuple[str, ...] = (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "complex64", "complex128",
)


def _core(name: str) -> Any:
    """A private core module, imported on first use (the backend loads while core imports).
    Looked up in ``sys.modules`` first: kernels call this on every call, and the import
    machinery costs a microsecond or two even for a loaded module."""
    module = sys.modules.get(f"torch.{name}")
    return module if module is not None else importlib.import_module(f"torch.{name}")


class _Primitives(Mapping[str, str]):
    """Primitive name -> its group (``"elementwise"``, ``"reduction"``...), read lazily."""

    def _table(self) -> Mapping[str, tuple[str, str]]:
        return _core("_core.prims").PRIMITIVES

    def __getitem__(self, name: str) -> str:
        return self._table()[name][0]

    def __iter__(self) -> Any:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


PRIMITIVES: Mapping[str, str] = _Primitives()


def table_version() -> int:
    """The version of the primitive table: bumped when a primitive is added or its schema
    changes, so a backend can say which table it was written against."""
    return _core("_core.prims").VERSION


def schema(name: str) -> str:
    """The schema of primitive ``name``, e.g. ``"add(Tensor(a!) out, Tensor a, Tensor b) -> ()"``.

    :raises KeyError: when ``name`` is not a primitive.
    """
    return _core("_core.prims").PRIMITIVES[name][1]


def primitive(name: str) -> Any:
    """The dispatching operator of primitive ``name`` (``torch.ops.prims.<name>``): calling it
    runs the kernel registered for its operands' device."""
    import torch

    if name not in _core("_core.prims").PRIMITIVES:
        raise KeyError(f"no primitive named {name!r}")
    try:
        return getattr(torch.ops.prims, name)
    except AttributeError:
        # the table's operators are defined when the first backend registers its kernels;
        # asked for before that (no tensor made yet), the primitive is defined here
        _core("_core.dispatch").define_primitives()
        return getattr(torch.ops.prims, name)


def reference(name: str) -> Kernel:
    """Core's reference kernel of primitive ``name``: numpy, for CPU tensors, same signature.

    A CPU backend's kernel calls it for a case its native code does not take. Another device's
    kernel must not (its tensors are not host memory): raise :class:`Decline` instead.

    :raises KeyError: when ``name`` has no reference kernel.
    """
    return _core("_refs").CPU_KERNELS[name]


def composite(qualname: str) -> Kernel:
    """Core's backend-independent kernel of operator ``qualname`` (``"aten::_softmax"``), for a
    fused kernel that overrides it and leaves a case to it.

    :raises RuntimeError: when core defines no such operator or it has no composite kernel.
    """
    _core("_functions")  # defines every aten operator of the op library
    op = _core("_core.dispatch").get(qualname)
    if op is None:
        raise RuntimeError(f"{qualname} is not defined by core (is plait-core older than the "
                           "backend?)")
    for key in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        if key in op.kernels:
            return op.kernels[key]
    raise RuntimeError(f"{qualname} has no composite kernel to fall back on")


def may_decline(kernel: K) -> K:
    """Mark ``kernel`` as one that may raise :class:`Decline`; returns it unchanged.

    Registration of a marked kernel gives the dispatcher a wrapper that catches ``Decline``
    and runs what serves the call without the kernel (see the module docstring)."""
    kernel.may_decline = True  # type: ignore[attr-defined]
    return kernel


def plannable(planner: Callable[..., Kernel | None], *,
              native: bool = False) -> Callable[[K], K]:
    """Give a kernel a *planner*: ``planner(*args, **kwargs)`` is called once per call
    signature, with the arguments of the signature's first call, and returns a kernel
    specialised to that signature, or None to keep ``kernel``. The dispatcher then calls the
    specialised kernel for every call of the signature (its plan, ``torch._core.plan``).

    With ``native=True`` the planner promises that its kernels call no operator: they
    allocate (:func:`empty`, :func:`allocator`), read data pointers and make native calls.
    The dispatcher then runs them as they are, without switching graph recording off around
    them (which a kernel whose operators would otherwise record needs). Such a kernel returns
    None, before writing anything, to leave a call to the generic path (it must not call
    ``kernel`` itself, which may call operators).

    A signature fixes every tensor argument's shape, strides, dtype and device and whether it
    requires grad, and every other argument's value; it does not fix storage offsets (read
    ``data_ptr`` per call), tensor values, or whether two different tensors share memory. The
    specialised kernel returns what ``kernel`` would, so it may skip the checks and the layout
    work ``kernel`` did for that signature::

        @contract.plannable(plan_softmax)
        def softmax(x, dim, half_to_float=False): ...
    """

    def mark(kernel: K) -> K:
        kernel.plan = planner  # type: ignore[attr-defined]
        kernel.plan_native = native  # type: ignore[attr-defined]
        return kernel

    return mark


def data_ptr(t: Any) -> int:
    """The address of ``t``'s first element: its storage's address plus
    ``t.storage_offset() * t.element_size()`` (0 for a tensor without memory)."""
    return int(t.data_ptr())


def memory(t: Any) -> tuple[Any, int]:
    """``(handle, byte_offset)``: the allocator handle holding ``t`` (the object the
    backend's :meth:`Allocator.allocate` returned) and the byte offset of ``t``'s first
    element in it. For backends whose memory the host cannot address by pointer."""
    return t.untyped_storage()._handle, int(t.storage_offset()) * t.element_size()


# empty(shape, dtype, device): an uninitialised contiguous tensor, a kernel's output. Unlike
# ``torch.empty`` it skips argument parsing, defaults and autograd, so it costs one
# allocation (inside a dispatch mode, the mode makes it). Core's own function, bound here:
# kernels call it for every output.
empty: Callable[[Sequence[int], Any, Any], Any] = _kernel_output


def bump_version(t: Any) -> None:
    """Record that a kernel wrote ``t`` in place: its version counter (which autograd checks
    saved tensors against) goes up by one, as PyTorch's ADInplaceOrView key bumps it for every
    in-place operator. Core's composites bump it in their own writes; a kernel that overrides
    one with a direct write calls this once per written tensor."""
    t._bump_version()


def allocator(outputs: Sequence[tuple[Sequence[int], Any, Any]]
              ) -> Callable[[], tuple[tuple[Any, ...], tuple[int, ...]]]:
    """For a planner: a callable that allocates one uninitialised contiguous tensor per
    ``(shape, dtype, device)`` of ``outputs`` (what :func:`empty` makes) and returns
    ``(tensors, data_pointers)``, two tuples in the order of ``outputs``. The layouts are
    resolved once, here, so a planned kernel's outputs and the addresses it passes to native
    code cost one call::

        new_outputs = contract.allocator([(shape, dtype, device), (stat_shape, dtype, device)])

        def planned(x, ...):
            (out, stats), (out_ptr, stats_ptr) = new_outputs()
    """
    return _outputs_allocator(outputs)


def empty_elementwise(shape: Sequence[int], dtype: Any, device: Any,
                      inputs: Sequence[Any]) -> Any:
    """An uninitialised output of an elementwise op of ``shape`` over the tensors ``inputs``,
    laid out as PyTorch lays such an output out (following the inputs' dimension order, as
    its TensorIterator does; contiguous when they are): for a fused kernel that takes strided
    operands and must return what one of PyTorch's elementwise kernels returns."""
    new_elementwise = _core("_core.output_layout").new_elementwise
    normalise = _core("_core.storage")._normalise
    return new_elementwise(tuple(map(int, shape)), dtype, normalise(device), list(inputs))


def reserve_counters(generator: Any, device: Any, n_counters: int) -> tuple[int, int]:
    """Take the next ``n_counters`` Philox counters of ``generator`` (None: the default
    generator of ``device``, a ``torch.device``) for a random kernel that overrides a composite
    sampler: returns ``(seed, first counter)``, the arguments core's own samplers hand to
    ``random_bits_``. Raises PyTorch's errors for a generator of the wrong type or device."""
    return _core("_aten.random")._generator(generator, device)._reserve(n_counters)


def dtype(name: str) -> Any:
    """The ``torch.dtype`` named ``name`` (``"float32"``).

    :raises KeyError: for a name not in :data:`DTYPE_NAMES`."""
    return _core("_core.dtype").DTYPES[name]


def dtype_codes(names: Iterable[str]) -> dict[Any, int]:
    """``torch.dtype -> code`` for a native library that numbers dtypes by its own list of
    names (code = position in ``names``); names core does not know are left out."""
    table = _core("_core.dtype").DTYPES
    return {table[name]: code for code, name in enumerate(names) if name in table}


# -- the argument checks of core's composites, for fused kernels that override them ---------


def check_layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any,
                     bias: Any) -> tuple[int, int, int]:
    """``aten::native_layer_norm``'s checks (PyTorch's errors); returns ``(axis, rows,
    cols)``: the input is normalised over its dims ``axis:``, seen as a (rows, cols) matrix."""
    return _core("_fused.norms").check_layer_norm(input, normalized_shape, weight, bias)


def check_convolution_backward(grad_output: Any, input: Any, weight: Any, stride: Any,
                               padding: Any, dilation: Any, transposed: bool,
                               output_padding: Any, groups: int) -> tuple[list[int], ...]:
    """``aten::convolution_backward``'s checks; returns stride, padding, dilation and
    output_padding with one value per spatial dimension."""
    return _core("_aten.conv").check_backward(grad_output, input, weight, stride, padding, dilation,
                                         transposed, output_padding, groups)


def check_scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any,
                                       dropout_p: float, is_causal: bool) -> None:
    """``aten::_scaled_dot_product_flash_attention_for_cpu``'s checks (types, ranks, the
    mask's dtype, dropout and causality arguments)."""
    _core("_fused.attention").check_args(query, key, value, attn_mask, dropout_p, is_causal)


def check_fused_adam(name: str, params: Sequence[Any], grads: Sequence[Any],
                     exp_avgs: Sequence[Any], exp_avg_sqs: Sequence[Any],
                     max_exp_avg_sqs: Sequence[Any], state_steps: Sequence[Any], amsgrad: bool,
                     lr: Any, grad_scale: Any, found_inf: Any) -> float | None:
    """``aten::_fused_adam_``'s checks; returns the learning rate as a float, or ``None`` when
    the step is skipped (``found_inf`` is 1, gradient scaling found an overflow)."""
    adam = _core("_fused.adam")
    adam.check_lists(name, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                     amsgrad, grad_scale, found_inf)
    return None if adam.skip_step(found_inf) else adam.learning_rate(lr)


def check_fused_adam_rows(name: str, params: Sequence[Any], grads: Sequence[Any],
                          exp_avgs: Sequence[Any], exp_avg_sqs: Sequence[Any],
                          max_exp_avg_sqs: Sequence[Any], state_steps: Sequence[Any],
                          amsgrad: bool, lr: Any, grad_scale: Any, found_inf: Any
                          ) -> tuple[float, list[tuple[int, tuple[int, ...] | None]]] | None:
    """:func:`check_fused_adam`, in one pass with each parameter's row (the parameter, its
    gradient, its moment buffers): ``(lr, rows)``, a row being the parameter's element count
    and the row's addresses when all its tensors are contiguous on the host (else None);
    ``None`` when the step is skipped."""
    adam = _core("_fused.adam")
    rows = adam.check_rows(name, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                           state_steps, amsgrad, grad_scale, found_inf)
    return None if adam.skip_step(found_inf) else (adam.learning_rate(lr), rows)


Decline.__module__ = __name__  # its public home (the dispatcher, below, defines it)
