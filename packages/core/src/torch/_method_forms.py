"""Spellings PyTorch has for ops implemented elsewhere: the in-place methods of a few
out-of-place ops (``Tensor.sinc_``, ``i0_``, ``gcd_``, ``lcm_``, ``ldexp_``, ``heaviside_``,
``igamma_``..., ``conj_physical_``; each also a ``torch.*`` function), the Tensor methods of
some functions (``cholesky_solve``, ``hardshrink``, ``orgqr``...), legacy methods (``resize``,
``storage_type``, ``is_xla``...), functions written in others (``native_dropout``,
``empty_permuted``, ``binomial``...), the ``torch.*`` functions of some Tensor
methods (``torch.fill_``, ``torch.zero_``, ``torch.is_signed``...), the ``unsafe_`` splits
(the same views as ``chunk``/``split``: Plait's views are always tracked), ``adjoint``,
``split_with_sizes``, ``fill`` and ``nonzero_static``. One row per name."""

from __future__ import annotations

from typing import Any

from ._aten import complex_views, indexing, shape
from ._aten.arith import inplace_method
from ._core.tensor import Tensor
from ._device_modules import _is_device
from ._fused import factorizations, float_parts, integer_math, special, statistics

# in-place method (and torch function) -> the out-of-place op it writes back
INPLACE_FORMS: dict[str, Any] = {
    "i0_": special.i0,
    "sinc_": special.sinc,
    "gcd_": integer_math.gcd,
    "lcm_": integer_math.lcm,
    "ldexp_": float_parts.ldexp,
    "heaviside_": statistics.heaviside,
    "renorm_": statistics.renorm,
    "igamma_": special.igamma,
    "igammac_": special.igammac,
    "mvlgamma_": special.mvlgamma,
    "polygamma_": lambda self, n: special.polygamma(n, self),  # (torch.polygamma(n, input))
}

# Tensor method -> the torch function it is, called with the tensor first
METHOD_FORMS: dict[str, Any] = {
    "cholesky_solve": factorizations.cholesky_solve,
    "cholesky_inverse": factorizations.cholesky_inverse,
    "triangular_solve": factorizations.triangular_solve,
}

# Tensor method -> the torch function of another package (plait-nn's activations; linalg's
# composites load on first use) that it calls by name
LATE_METHOD_FORMS: dict[str, str] = {
    "hardshrink": "hardshrink",
    "prelu": "prelu",
    "orgqr": "orgqr",
    "lu_solve": "lu_solve",
}

# torch function -> the Tensor method it calls on its first argument
FUNCTION_FORMS: tuple[str, ...] = (
    "fill_", "zero_", "detach_", "index_put_", "addmv_", "resize_as_", "is_signed",
    "is_inference", "is_neg", "get_device",
)


def _function_form(method: str) -> Any:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = f"``input.{method}(...)``."
    return fn


def _late_method_form(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        import torch

        return getattr(torch, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``torch.{name}(self, ...)``."
    return method


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """The explicit Q of a Householder QR (``torch.linalg.householder_product``)."""
    import torch.linalg

    return torch.linalg.householder_product(input, input2)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The solution of ``A x = b`` from ``A``'s LU factorization (``torch.linalg.lu_solve``
    with PyTorch's older argument order)."""
    import torch.linalg

    return torch.linalg.lu_solve(LU_data, LU_pivots, b, out=out)


def const_data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element (read-only use; ``data_ptr``)."""
    return self.data_ptr()


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """A copy of ``self`` resized to ``sizes`` (deprecated: use ``reshape`` or ``resize_``)."""
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_(*sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """A copy of ``self`` resized to ``tensor``'s shape (deprecated: ``resize_as_``)."""
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_as_(tensor)


def storage_type(self: Tensor) -> type:
    """The legacy typed-storage class of ``self``'s dtype (``torch.FloatStorage``...)."""
    from ._utils import storage_type_of

    return storage_type_of(self.dtype)


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``nn.Module.load_state_dict`` turns the saved value ``other`` into this parameter
    or buffer when it swaps tensors: ``other.detach()`` with ``assign``, else ``self``'s
    values overwritten by ``other``'s and detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def is_distributed(self: Tensor) -> bool:
    """Always False (PyTorch's legacy flag)."""
    return False


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout and its keep mask: ``(input * mask / (1 - p), mask)`` when training (``train``
    True or None), else ``(a copy of input, all True)``."""
    import torch

    if train is False:
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    if p >= 1:
        return torch.zeros_like(input), torch.zeros_like(input, dtype=torch.bool)
    mask = torch.empty_like(input).bernoulli_(1 - p).bool()
    return input * mask / (1 - p), mask


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of logical shape ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((2, 3, 4), (0, 2, 1))`` has
    strides (12, 1, 3)."""
    import torch

    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; or physical_layout {list(order)} is not a "
                           f"permutation of the dims of size {list(size)}")
    stored = torch.empty([size[d] for d in order], dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory)
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return stored.permute(inverse).requires_grad_(requires_grad)


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` written into its ``as_strided(size, stride,
    storage_offset)`` view."""
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Samples of Binomial(``count``, ``prob``), elementwise: the successes among ``count``
    draws (counts are whole numbers; the largest bounds the work)."""
    import torch

    count, prob = torch.broadcast_tensors(count, prob)
    trials = int(count.max().item()) if count.numel() else 0
    if trials <= 0:
        return torch.zeros_like(prob)
    draws = torch.rand(*prob.shape, trials, dtype=prob.dtype, device=prob.device,
                       generator=generator)
    hits = (draws < prob.unsqueeze(-1)) & (
        torch.arange(trials, device=prob.device) < count.unsqueeze(-1))
    return hits.sum(-1).to(prob.dtype)


def sym_sqrt(a: Any) -> Any:
    """The square root of a number (symbolic numbers answer ``__sym_sqrt__``)."""
    import math

    method = getattr(a, "__sym_sqrt__", None)
    return method() if method is not None else math.sqrt(a)


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugate ``self`` in place (nothing to do for a real tensor)."""
    if self.dtype.is_complex:
        self.copy_(complex_views.conj_physical(self))
    return self


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, as a view (``input.mH``)."""
    return input.mH


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> Any:
    """``input`` cut along ``dim`` into pieces of the given sizes (views)."""
    return input.split(list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> Any:
    """``torch.split`` (PyTorch's unsafe form skips view tracking; these views are tracked)."""
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> Any:
    """``torch.split`` with sizes (tracked views, as :func:`unsafe_split`)."""
    return input.split(list(split_sizes), dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> Any:
    """``torch.chunk`` (tracked views, as :func:`unsafe_split`)."""
    return input.chunk(chunks, dim)


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor)."""
    return input.clone().fill_(value)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements as a ``(size, input.dim())`` int64 tensor: the first
    ``size`` of them, padded with ``fill_value`` rows when there are fewer."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be a non-negative int, but got {size}")
    found = indexing.nonzero(input)[:size]
    missing = size - found.shape[0]
    if missing == 0:
        return found
    return shape.cat([found, found.new_full((missing, found.shape[1]), fill_value)], 0)


for _name, _op in INPLACE_FORMS.items():
    globals()[_name] = inplace_method(_op, _name)
for _name in FUNCTION_FORMS:
    globals()[_name] = _function_form(_name)
del _name

METHODS: dict[str, Any] = {
    **{name: globals()[name] for name in INPLACE_FORMS},
    **METHOD_FORMS,
    **{name: _late_method_form(fn) for name, fn in LATE_METHOD_FORMS.items()},
    **{f"is_{kind}": _is_device(kind) for kind in ("xla", "ipu", "maia", "mtia", "vulkan")},
    "const_data_ptr": const_data_ptr,
    "resize": resize,
    "resize_as": resize_as,
    "storage_type": storage_type,
    "module_load": module_load,
    "is_distributed": is_distributed,
    "conj_physical_": conj_physical_,
    "adjoint": adjoint,
    "split_with_sizes": split_with_sizes,
    "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
    "unsafe_chunk": unsafe_chunk,
    "nonzero_static": nonzero_static,
    "as_strided_scatter": as_strided_scatter,
}

__all__ = [*INPLACE_FORMS, *FUNCTION_FORMS, "adjoint", "as_strided_scatter", "binomial",
           "conj_physical_", "empty_permuted", "fill", "lu_solve", "native_dropout",
           "nonzero_static", "orgqr", "split_with_sizes", "sym_sqrt", "unsafe_chunk",
           "unsafe_split", "unsafe_split_with_sizes"]
