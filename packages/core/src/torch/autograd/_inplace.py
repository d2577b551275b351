"""In-place writes under autograd (``copy_``, ``fill_``, and every ``op_`` built on them).

After ``dst.copy_(src)`` the values of ``dst`` are those of ``src``: ``dst`` gets a node that
passes its gradient to ``src``. When ``dst`` is a view, its base changed too: the base gets a
``CopySlices`` node (its gradient outside the view goes to the base's previous history, inside
it to ``src``), and the view becomes a view of that new base, as PyTorch does. A leaf that
requires grad cannot be written in place while grad mode is on.
"""

from __future__ import annotations

from typing import Any

from .._core import config as _config, dtype as _dtype
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from ._nodes import OpBackward, conform, edge_of
from .graph import Node, SavedTensor


def tracking(dst: Tensor, src: Tensor | None) -> bool:
    """Whether this in-place write must be recorded."""
    if not (dst._requires_grad or (src is not None and src._requires_grad)):
        base = dst._base
        if base is None or not base._requires_grad:
            return False
    return not _config.state.no_grad_active or _config.is_grad_enabled()


def begin(dst: Tensor, src: Tensor | None) -> bool:
    """Whether this in-place write is recorded, after the checks before it (what the op
    library calls through :mod:`torch._core.upcalls`)."""
    if not tracking(dst, src):
        return False
    before_write(dst, src)
    return True


def before_write(dst: Tensor, src: Tensor | None) -> None:
    """Checks and bookkeeping before the bytes of ``dst`` change."""
    if dst._requires_grad and dst.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = dst._base
    if base is not None and base._requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if dst.__dict__.get("_inference") and not _config.is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed. You can make a clone to get a normal tensor before doing "
                           "inplace update.")
    # The op that computed src may have saved dst itself (``a.mul_(b)`` saves ``a``): keep the
    # value it had, since the write below changes it: a clone that keeps dst's history, so
    # that a double backward through the saved value still reaches it.
    node = src.grad_fn if src is not None else None
    if isinstance(node, OpBackward):
        for i, v in enumerate(node._kept_args):
            if isinstance(v, SavedTensor) and v._tensor is dst:
                node._kept_args[i] = SavedTensor(dst.clone(), node, False)


class CopyBackwards(Node):
    """``dst.copy_(src)`` (or a fill, without ``src``) on a tensor that is not a view: the
    gradient goes to ``src``, and zeros go to ``dst``'s history before the write, as in
    PyTorch (so a tensor whose values were all overwritten gets a zero gradient, not none)."""

    def __init__(self, dst: Tensor, src: Tensor | None) -> None:
        super().__init__()
        previous = edge_of(dst)
        source = src.grad_fn if src is not None else None
        if source is not None and previous in source._next:
            # an in-place op (``y.relu_()`` is ``y.copy_(relu(y))``): the source's own node
            # already feeds the previous history, which needs no zeros besides
            previous = (None, 0)
        self._next = (previous, edge_of(src) if src is not None else (None, 0))
        self._meta = (src._shape, src._dtype, src._device) if src is not None else None

    def apply(self, grads: list[Any]) -> list[Any]:
        from .._aten import factories as _fac

        g = grads[0]
        previous = _fac.zeros_like(g) if self._next[0][0] is not None else None
        return [previous, conform(g, self._meta) if self._meta is not None else None]


class CopySlices(Node):
    """The base of a view written in place: outside the view the gradient flows to the base's
    previous history, inside it to the written source."""

    def __init__(self, base: Tensor, view: Tensor, src: Tensor | None) -> None:
        super().__init__()
        self._next = (edge_of(base),) + ((edge_of(src),) if src is not None else ())
        self._positions = view_positions(base, view)
        self._base_shape = base._shape
        self._src_meta = (src._shape, src._dtype, src._device) if src is not None else None

    def apply(self, grads: list[Any]) -> list[Any]:
        from .._aten import factories as _fac

        g = grads[0]
        flat_pos = self._positions.reshape(-1)
        keep = _fac.ones(g.numel(), dtype=g.dtype, device=g.device)
        keep = keep.index_fill(0, flat_pos, 0)
        out = [(g.reshape(-1) * keep).reshape(self._base_shape)]
        if self._src_meta is not None:
            piece = g.reshape(-1).index_select(0, flat_pos).reshape(self._positions.shape)
            out.append(conform(piece, self._src_meta))
        return out


def view_positions(base: Tensor, view: Tensor) -> Tensor:
    """For each element of ``view``, the flat (row-major) index of the ``base`` element it
    aliases (``base`` must not overlap itself)."""
    from .._aten import creation as _creation, factories as _fac

    with no_grad():
        n = base.numel()
        idx = _fac.empty_strided(base._shape, base._stride, dtype=_dtype.int64,
                                  device=base.device)
        idx.copy_(_creation.arange(n, device=base.device).reshape(base._shape))
        return idx.as_strided(view._shape, view._stride, view._offset - base._offset).clone()


class _ViewOfBase(Node):
    """A view after an in-place write through it: a function of its (rebased) base."""

    def __init__(self, base: Tensor, positions: Tensor) -> None:
        super().__init__()
        self._next = (edge_of(base),)
        self._positions = positions
        self._base_shape = base._shape
        self._base_numel = base.numel()

    def name(self) -> str:
        return "AsStridedBackward0"

    def apply(self, grads: list[Any]) -> list[Any]:
        from .._aten import factories as _fac

        g = grads[0]
        flat = _fac.zeros(self._base_numel, dtype=g.dtype, device=g.device)
        flat = flat.scatter_reduce(0, self._positions.reshape(-1), g.reshape(-1), "sum")
        return [flat.reshape(self._base_shape)]


def after_write(dst: Tensor, src: Tensor | None) -> None:
    """Give ``dst`` (and its base, for a view) the history of the write."""
    base = dst._base
    if base is None:
        dst.grad_fn = CopyBackwards(dst, src)
        dst._requires_grad = True
        dst.__dict__["_output_nr"] = 0
        return
    node = CopySlices(base, dst, src)
    base.grad_fn = node
    base._requires_grad = True
    base.__dict__["_output_nr"] = 0
    dst.grad_fn = _ViewOfBase(base, node._positions)
    dst._requires_grad = True
    dst.__dict__["_output_nr"] = 0
