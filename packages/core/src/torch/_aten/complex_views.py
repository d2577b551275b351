"""Complex numbers as pairs of reals: ``view_as_real``, ``view_as_complex``, the ``real`` and
``imag`` parts, and the conjugate (``conj``, ``conj_physical``, ``resolve_conj``, ``is_conj``).

``view_as_real`` and ``view_as_complex`` are views over the same storage (a complex element is
its real and imaginary parts side by side), and ``real``/``imag`` select from the real view, so
writing into them writes into the complex tensor, as in PyTorch.

``conj`` returns a conjugated copy: PyTorch's lazy conjugate bit (a view whose reads negate the
imaginary part) is not modelled, so ``is_conj()`` is always False and ``resolve_conj`` returns
its input. Results are equal; only aliasing differs (writing into ``x.conj()`` does not change
``x`` here). Real tensors are their own conjugate: ``conj`` and ``conj_physical`` return them.
"""

from __future__ import annotations

from typing import Any

from .._core import dispatch as _dispatch
from .._core.tensor import Tensor
from .views import _SCALAR_NAMES

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical",
           "resolve_conj", "resolve_neg", "is_conj"]


def _view_as_real(self: Tensor) -> Tensor:
    if not self._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    # one complex element = two reals, the real part first
    shape = self._shape + (2,)
    stride = tuple(s * 2 for s in self._stride) + (1,)
    base = self._base if self._base is not None else self
    return Tensor._make(self._storage, shape, stride, self._offset * 2, self._dtype.to_real(),
                        self._device, self._vc, base)


def _view_as_complex(self: Tensor) -> Tensor:
    if self._dtype._name not in ("float32", "float64"):
        # PyTorch also takes half (as complex32, a dtype this build does not have)
        name = _SCALAR_NAMES.get(self._dtype._name, self._dtype._name)
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {name}")
    if not self._shape or self._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in self._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    base = self._base if self._base is not None else self
    return Tensor._make(self._storage, self._shape[:-1], tuple(s // 2 for s in self._stride[:-1]),
                        self._offset // 2, self._dtype.to_complex(), self._device, self._vc,
                        base)


def _op(name: str) -> _dispatch.Operator:
    """An operator of another op module (looked up when called: those may load later)."""
    op = _dispatch.get(f"aten::{name}")
    assert op is not None, name
    return op


def _conj_physical(self: Tensor) -> Tensor:
    out = _op("clone")(self)
    if self._dtype.is_complex:
        imag_part = ATEN["select.int"](ATEN["view_as_real"](out), -1, 1)
        _op("copy_")(imag_part, _op("neg")(imag_part))
    return out


ATEN = _dispatch.define_aten({
    "view_as_real": ("view_as_real(Tensor(a) self) -> Tensor(a)", _view_as_real),
    "view_as_complex": ("view_as_complex(Tensor(a) self) -> Tensor(a)", _view_as_complex),
    "conj_physical": ("conj_physical(Tensor self) -> Tensor", _conj_physical),
})
ATEN["select.int"] = _dispatch.get("aten::select.int")  # defined by torch._aten.views


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor: a last dimension of size 2 holds each element's real
    and imaginary parts (shares ``input``'s memory)."""
    return ATEN["view_as_real"](input)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a real tensor whose last dimension (size 2, stride 1) holds real and
    imaginary parts (shares ``input``'s memory)."""
    return ATEN["view_as_complex"](input)


def real(input: Tensor) -> Tensor:
    """The real part: a view of a complex tensor, ``input`` itself for a real one."""
    if input._dtype.is_complex:
        return ATEN["select.int"](ATEN["view_as_real"](input), -1, 0)
    return input


def imag(input: Tensor) -> Tensor:
    """The imaginary part (a view): only complex tensors have one."""
    if input._dtype.is_complex:
        return ATEN["select.int"](ATEN["view_as_real"](input), -1, 1)
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate as a new tensor; a real tensor is its own conjugate (returned
    as it is, as in PyTorch)."""
    return ATEN["conj_physical"](input) if input._dtype.is_complex else input


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: a conjugated copy of a complex tensor (no lazy conjugate bit),
    ``input`` itself for a real one."""
    return ATEN["conj_physical"](input) if input._dtype.is_complex else input


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: no tensor carries a lazy conjugate bit here, so there is nothing to resolve."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """``input``: no tensor carries a lazy negative bit here."""
    return input


def is_conj(input: Tensor) -> bool:
    """False: conjugates are materialised (see the module docstring)."""
    return False


def _is_neg(input: Tensor) -> bool:
    return False


METHODS: dict[str, Any] = {
    "real": property(real),
    "imag": property(imag),
    "conj": conj,
    "conj_physical": conj_physical,
    "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg,
    "is_conj": is_conj,
    "is_neg": _is_neg,
}
