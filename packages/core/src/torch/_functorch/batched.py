"""Batched tensors and the dispatch mode of one ``vmap`` level.

A :class:`BatchedTensor` is what the function under ``vmap`` sees: a tensor with the
*logical* shape of one sample (a wrapper shell with no data) that holds the *physical* tensor
of all samples with the batch dim first, and the level of the ``vmap`` that made it (nested
``vmap`` calls make nested wrappers, the outer level's tensor being the physical tensor of the
inner one).

Each ``vmap`` call enters a :class:`VmapMode` (a ``TorchDispatchMode``) for its level. The
dispatcher hands the mode every aten operator called inside, below autograd; an operator with
a batched argument of the mode's level is served by that operator's batching rule
(:mod:`torch._functorch.rules`), which calls operators on the physical tensors (those of an
outer level reach the outer level's mode, which is next on the mode stack). An operator
without a rule is decomposed when it has a ``CompositeImplicitAutograd`` kernel, and otherwise
run once per sample and stacked, with a warning naming it (the fallback). Nothing of this
costs an ordinary call: the mode is on the stack only inside ``vmap``.

Autograd sees logical tensors: a ``grad`` transform inside ``vmap`` records its graph on the
wrappers, and the backward formulas it runs are batched like any other call. Tensors of the
physical level (a ``grad`` around ``vmap``) are recorded by the operators the rules call,
under the grad mode that was on when the ``vmap`` began.
"""

from __future__ import annotations

import warnings
from typing import Any

from torch._core import config as _config, dispatch as _dispatch
from torch._core.tensor import Tensor, _disabled_torch_function_impl
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["BatchedTensor", "VmapMode", "is_batched", "fallback_counts"]


class BatchedTensor(Tensor):
    """One sample's view of a batch: logical metadata, the physical tensor in ``_bt_value``
    (batch dim 0) and the ``vmap`` level in ``_bt_level``. Only the mode of its level (active
    inside its ``vmap``) computes on it."""

    # Ops reach the mode through the dispatch key; no __torch_function__ checks in front of
    # every plain call (defining neither protocol keeps ordinary calls on their fast path).
    __torch_function__ = _disabled_torch_function_impl
    _planned_as_tensor = False  # (not a dense tensor below the facade: never planned)

    _bt_value: Tensor
    _bt_level: int

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._bt_level}, bdim=0, value=\n{self._bt_value!r}\n)"

    def tolist(self) -> Any:
        """Python numbers cannot stand for a batch of samples: PyTorch's ``.item()`` error."""
        raise RuntimeError(_NO_ITEM)

    def numpy(self, *, force: bool = False) -> Any:
        """A numpy array cannot stand for a batch of samples inside ``vmap``."""
        raise RuntimeError("vmap: numpy() is not supported on a batched tensor inside vmap "
                           "(the function sees one sample, the data holds all of them); "
                           "return the tensor and convert it outside vmap")


def is_batched(x: Any) -> bool:
    """Whether ``x`` is a tensor batched by an active ``vmap``."""
    return isinstance(x, BatchedTensor)


def make_batched(value: Tensor, level: int) -> BatchedTensor:
    """Wrap ``value`` (batch dim 0) as a tensor of ``level`` with the shape of one sample."""
    # The shell has one sample's layout in the physical storage (sample 0's), so that view
    # geometry read from it (autograd's view backwards, as_strided) is that of the data.
    shell = Tensor._make_wrapper_subclass(BatchedTensor, tuple(value.shape[1:]),
                                          tuple(value.stride()[1:]), value.storage_offset(),
                                          dtype=value.dtype, device=value.device)
    shell._bt_value = value
    shell._bt_level = level
    return shell


# op qualname -> how many calls took the loop-and-stack fallback (tests read it)
fallback_counts: dict[str, int] = {}
_fallback_warned: set[str] = set()

_NO_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
            "over calling .item() on a Tensor, please try to rewrite what you're doing with "
            "other operations.")
_DATA_DEPENDENT = ("vmap: It looks like you're attempting to use a Tensor in some "
                   "data-dependent control flow. We don't support that yet, please shout over "
                   "at https://github.com/pytorch/functorch/issues/257 .")


class VmapMode(TorchDispatchMode):
    """The dispatch mode of one ``vmap`` level: batch size, randomness, and the grad mode the
    physical tensors' operators run under."""

    # its rules batch Plait's fused operators (aten::linear...) directly: calls under it keep
    # them rather than PyTorch's decompositions (torch._core.dispatch.python_key_active)
    takes_fused_operators = True

    def __init__(self, level: int, batch_size: int, randomness: str) -> None:
        self.level = level
        self.batch_size = batch_size
        self.randomness = randomness
        self.grad_enabled = _config.is_grad_enabled()

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        rules = _rules()
        kwargs = kwargs or {}
        level = self.level
        if not _has_level(args, kwargs, level):
            unbatched = rules.UNBATCHED.get(func.qualname)
            if unbatched is not None:  # random operators: randomness decides
                return unbatched(self, func, args, kwargs)
            return func(*args, **kwargs)
        rule = rules.RULES.get(func.qualname)
        if rule is None:
            implicit = func.kernels.get(_dispatch.COMPOSITE_IMPLICIT)
            if implicit is not None:  # written in other operators: batch those
                with self:
                    return implicit(*args, **kwargs)
            rule = _fallback
        ctx = Level(self)
        pargs = tuple(ctx.unwrap(a) for a in args)
        pkwargs = {k: ctx.unwrap(v) for k, v in kwargs.items()}
        mutated = func.schema.mutated
        if mutated and args and not (isinstance(args[0], BatchedTensor)
                                     and args[0]._bt_level == level):
            # an in-place op writing a tensor of the level outside from one of this level
            name = func.name.partition(".")[0]
            raise RuntimeError(
                f"vmap: {name}(self, *extra_args) is not possible because there exists a "
                "Tensor `other` in extra_args that has more elements than `self`. This "
                "happened due to `other` being vmapped over but `self` not being vmapped over "
                f"in a vmap. Please try to use out-of-place operators instead of {name}. If "
                "said operator is being called inside the PyTorch framework, please file a "
                "bug report instead.")
        if _dispatch._requires_grad(args, kwargs):
            # The Autograd key above recorded this call for the logical tensors and turned
            # grad off; the physical tensors belong to the level outside, which records under
            # the grad mode it had when this vmap began.
            prev = _config.set_grad_state(self.grad_enabled)
            try:
                out = rule(ctx, func, pargs, pkwargs)
            finally:
                _config.set_grad_state(prev)
        else:
            out = rule(ctx, func, pargs, pkwargs)
        if mutated and isinstance(args[0], BatchedTensor):
            args[0]._vc[0] += 1  # the wrapper's saved-tensor checks see the write
            return args[0]
        return ctx.wrap(out)


def _has_level(args: tuple[Any, ...], kwargs: dict[str, Any], level: int) -> bool:
    for a in args:
        if a.__class__ is BatchedTensor:
            if a._bt_level == level:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for x in a:
                if x.__class__ is BatchedTensor and x._bt_level == level:
                    return True
    for v in kwargs.values():
        if v.__class__ is BatchedTensor:
            if v._bt_level == level:
                return True
        elif v.__class__ is list or v.__class__ is tuple:
            for x in v:
                if x.__class__ is BatchedTensor and x._bt_level == level:
                    return True
    return False


_rules_module: Any = None


def _rules() -> Any:
    """The rule tables (torch._functorch.rules imports this module, so it loads on first use)."""
    global _rules_module
    if _rules_module is None:
        from . import rules

        _rules_module = rules
    return _rules_module


def rebuild(like: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    """``items`` in a sequence of ``like``'s kind: a list, a tuple, a namedtuple or a
    ``torch.return_types`` structseq (built from one sequence)."""
    if isinstance(like, list):
        return items
    if type(like) is tuple:
        return tuple(items)
    if hasattr(like, "_make"):  # a namedtuple
        return type(like)._make(items)
    return type(like)(items)


class Level:
    """What a batching rule knows of the call: the batch size, which physical tensors are
    batched (batch dim 0), the mode's randomness; and the helpers rules share."""

    __slots__ = ("_batched", "mode", "size")

    def __init__(self, mode: VmapMode) -> None:
        self.mode = mode
        self.size = mode.batch_size
        self._batched: set[int] = set()

    def unwrap(self, x: Any) -> Any:
        if x.__class__ is BatchedTensor and x._bt_level == self.mode.level:
            v = x._bt_value
            self._batched.add(id(v))
            return v
        if x.__class__ is list or x.__class__ is tuple:
            return x.__class__(self.unwrap(y) for y in x)
        return x

    def wrap(self, out: Any) -> Any:
        if isinstance(out, Tensor):
            return make_batched(out, self.mode.level)
        if isinstance(out, (list, tuple)):
            return rebuild(out, [self.wrap(o) for o in out])
        return out

    def batched(self, x: Any) -> bool:
        """Whether physical tensor ``x`` carries the batch dim (dim 0)."""
        return id(x) in self._batched

    def mark(self, x: Tensor) -> Tensor:
        """Record that ``x``, a tensor a rule made, carries the batch dim."""
        self._batched.add(id(x))
        return x

    def rank(self, x: Tensor) -> int:
        """The logical rank of ``x``."""
        return x.dim() - 1 if id(x) in self._batched else x.dim()

    def full(self, x: Tensor) -> Tensor:
        """``x`` with the batch dim: an unbatched tensor expanded over it (no copy)."""
        if id(x) in self._batched:
            return x
        return self.mark(x.unsqueeze(0).expand((self.size,) + tuple(x.shape)))


def _fallback(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``func`` once per sample and stack the results (in-place ops write each sample's
    slice of ``self``). Warns once per operator that it has no batching rule."""
    name = func.qualname
    fallback_counts[name] = fallback_counts.get(name, 0) + 1
    if name not in _fallback_warned or _config.state.warn_always:
        _fallback_warned.add(name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation.", UserWarning, stacklevel=_config.external_stacklevel())
    from torch._aten import shape as _shape

    def pick(x: Any, i: int) -> Any:
        if isinstance(x, Tensor) and ctx.batched(x):
            return x.select(0, i)
        if x.__class__ is list or x.__class__ is tuple:
            return x.__class__(pick(y, i) for y in x)
        return x

    results = [func(*(pick(a, i) for a in args), **{k: pick(v, i) for k, v in kwargs.items()})
               for i in range(ctx.size)]
    if func.schema.mutated:
        return args[0]
    first = results[0]
    if isinstance(first, Tensor):
        return _shape.stack(results)
    if isinstance(first, (list, tuple)):
        return rebuild(first, [_shape.stack([r[j] for r in results])
                               if isinstance(first[j], Tensor) else first[j]
                               for j in range(len(first))])
    if any(r != first for r in results[1:]):
        raise RuntimeError(_DATA_DEPENDENT)
    return first
