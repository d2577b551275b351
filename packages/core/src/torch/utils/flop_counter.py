"""``torch.utils.flop_counter.FlopCounterMode``: count the floating-point operations a region
runs, per operator and per module, as PyTorch's flop counter does.

A dispatch mode sees every aten operator; the matrix products, convolutions and attention have
a formula (two flops per multiply-add; elementwise ops count nothing, as in PyTorch). Modules are
tracked through nn's global forward hooks: an op is counted under ``"Global"`` and under every
module whose forward is running (``"Net"``, ``"Net.encoder"``, ``"Net.encoder.0"``...).
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

__all__ = ["FlopCounterMode", "register_flop_formula"]

# aten name -> flops(args, kwargs, out)
_FORMULAS: dict[str, Callable[..., int]] = {}


def register_flop_formula(targets: Any, get_raw: bool = False) -> Callable[..., Any]:
    """Decorator: ``formula(*args, out=..., **kwargs) -> flops`` for the given operator(s)
    (packets, overloads or aten names)."""
    names = [_name_of(t) for t in (targets if isinstance(targets, (list, tuple)) else [targets])]

    def register(formula: Callable[..., int]) -> Callable[..., int]:
        for name in names:
            _FORMULAS[name] = lambda args, kwargs, out, f=formula: f(*args, out=out, **kwargs)
        return formula
    return register


def _name_of(op: Any) -> str:
    name = op if isinstance(op, str) else getattr(op, "name", None) or str(op)
    return str(name).removeprefix("aten::").removeprefix("aten.").partition(".")[0]


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


def _matmul_flops(a: Sequence[int], b: Sequence[int]) -> int:
    """``a @ b`` with matmul's broadcasting: 2 * batch * m * k * n."""
    if len(a) == 1:
        a = (1, *a)
    if len(b) == 1:
        b = (*b, 1)
    batch = math.prod(max(x, y) for x, y in zip(
        (1,) * (len(b) - len(a)) + tuple(a[:-2]), (1,) * (len(a) - len(b)) + tuple(b[:-2])))
    return 2 * batch * a[-2] * a[-1] * b[-1]


def _conv_flops(x: Sequence[int], w: Sequence[int], out: Sequence[int], transposed: bool) -> int:
    """2 flops per multiply-add: every output (input, when transposed) position of every batch
    and output channel takes ``in_channels/groups * kernel`` products."""
    positions = math.prod(x[2:]) if transposed else math.prod(out[2:])
    per_position = math.prod(w[1:]) * (w[0] if transposed else 1)
    channels = out[1] if not transposed else 1
    return 2 * x[0] * positions * channels * per_position


def _sdpa_flops(q: Sequence[int], k: Sequence[int], v: Sequence[int]) -> int:
    """``softmax(q k^T) v``: two batched products."""
    batch = math.prod(q[:-2])
    return 2 * batch * q[-2] * q[-1] * k[-2] + 2 * batch * q[-2] * k[-2] * v[-1]


def _convolution(args: Any, kwargs: Any, out: Any) -> int:
    transposed = bool(args[6]) if len(args) > 6 else bool(kwargs.get("transposed", False))
    return _conv_flops(_shape(args[0]), _shape(args[1]), _shape(out), transposed)


def _convolution_backward(args: Any, kwargs: Any, out: Any) -> int:
    """The input's gradient (``output_mask[0]``) takes as many multiply-adds as the forward
    convolution; the weight's (``output_mask[1]``) is counted, as PyTorch counts it, as a
    correlation of every input channel with every output channel, ``groups`` times the
    forward's; the bias's is a sum (no flops)."""
    names = ("grad_output", "input", "weight", "bias_sizes", "stride", "padding", "dilation",
             "transposed", "output_padding", "groups", "output_mask")
    bound = dict(zip(names, args)) | kwargs
    forward = _conv_flops(_shape(bound["input"]), _shape(bound["weight"]),
                          _shape(bound["grad_output"]), bool(bound["transposed"]))
    mask = bound["output_mask"]
    groups = int(bound["groups"])
    return forward * (int(bool(mask[0])) + groups * int(bool(mask[1])))


_FORMULAS.update({
    "mm": lambda a, k, out: _matmul_flops(_shape(a[0]), _shape(a[1])),
    "matmul": lambda a, k, out: _matmul_flops(_shape(a[0]), _shape(a[1])),
    "bmm": lambda a, k, out: _matmul_flops(_shape(a[0]), _shape(a[1])),
    "addmm": lambda a, k, out: _matmul_flops(_shape(a[1]), _shape(a[2])),
    "baddbmm": lambda a, k, out: _matmul_flops(_shape(a[1]), _shape(a[2])),
    "linear": lambda a, k, out: _matmul_flops(_shape(a[0]), _shape(a[1])[::-1]),
    "convolution": _convolution,
    "_convolution": _convolution,
    "convolution_backward": _convolution_backward,
    "scaled_dot_product_attention": lambda a, k, out: _sdpa_flops_off_cpu(a[0], a[1], a[2]),
})


def _sdpa_flops_off_cpu(q: Any, k: Any, v: Any) -> int | None:
    """Attention's two products, as PyTorch counts its flash/efficient/cuDNN kernels; on the
    CPU PyTorch's operator is ``_scaled_dot_product_flash_attention_for_cpu``, which its
    counter has no formula for: None (not counted), as in PyTorch."""
    if q.device.type == "cpu":
        return None
    return _sdpa_flops(_shape(q), _shape(k), _shape(v))


class _GradientMarks:
    """The module chains a tensor's gradient hook may move the backward pass to."""

    __slots__ = ("entering", "leaving")

    def __init__(self) -> None:
        self.entering: list[tuple[str, ...]] = []
        self.leaving: list[tuple[str, ...]] = []


class FlopCounterMode(TorchDispatchMode):
    """``with FlopCounterMode(display=False) as counter: model(x)``; then
    ``counter.get_total_flops()`` and ``counter.get_flop_counts()`` (module name -> operator
    packet -> flops). With ``display`` the table is written to stdout on exit, as PyTorch's
    does. ``mods`` is accepted for PyTorch's older signature and unused (every module is
    tracked); ``depth`` limits the table's module depth."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Callable[..., int]] | None = None) -> None:
        super().__init__()
        self.depth = depth
        self.display = display
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self._formulas = dict(_FORMULAS)
        for op, formula in (custom_mapping or {}).items():
            self._formulas[_name_of(op)] = \
                lambda args, kwargs, out, f=formula: f(*args, out=out, **kwargs)
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self._parents: list[str] = ["Global"]
        # The modules a backward pass is in (outermost first): set by gradient hooks on a
        # module's outputs (entering it) and inputs (leaving it), as PyTorch's ModuleTracker
        # attributes backward ops to the modules whose forward made them.
        self._backward_parents: tuple[str, ...] = ("Global",)
        # (keyed by identity: a tensor's == is elementwise)
        self._gradient_marks: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._names: dict[int, str] = {}
        self._hooks: list[Any] = []

    # -- counting ------------------------------------------------------------------------

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        formula = self._formulas.get(_name_of(func))
        flops = formula(args, kwargs, out) if formula is not None else None
        if flops is not None:  # (None: no formula for this case)
            flops = int(flops)
            packet = getattr(func, "overloadpacket", func)
            parents = self._backward_parents if _in_backward() else self._parents
            for parent in dict.fromkeys(parents):
                self.flop_counts[parent][packet] += flops
        return out

    def get_total_flops(self) -> int:
        """Every counted operation of the region."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """Module name (``"Global"`` for everything) -> operator packet -> flops."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts as a text table, modules down to ``depth`` levels."""
        depth = self.depth if depth is None else depth
        total = max(self.get_total_flops(), 1)
        rows = [("Module", "FLOP", "% Total")]
        for module, counts in self.flop_counts.items():
            if module != "Global" and module.count(".") + 1 > depth:
                continue
            flops = sum(counts.values())
            rows.append((module, _human(flops), f"{100 * flops / total:.2f}%"))
            for packet, n in counts.items():
                rows.append((f" - {packet}", _human(n), f"{100 * n / total:.2f}%"))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)

    # -- modules ----------------------------------------------------------------------------

    def _enter_module(self, module: Any, inputs: Any) -> None:
        parent = self._parents[-1]
        name = self._names.get(id(module))
        if name is None:
            name = type(module).__name__
            if parent != "Global":
                owner = self._modules_by_name.get(parent)
                for child_name, child in getattr(owner, "_modules", {}).items():
                    if child is module:
                        name = f"{parent}.{child_name}"
                        break
            self._names[id(module)] = name
            self._modules_by_name[name] = module
        # the gradients of the inputs are ready once the backward pass has left the module
        self._on_gradient(inputs, tuple(self._parents), entering=False)
        self._parents.append(name)

    def _leave_module(self, module: Any, inputs: Any, output: Any) -> None:
        # the backward pass enters the module when its outputs' gradients are ready
        self._on_gradient(output, tuple(self._parents), entering=True)
        if len(self._parents) > 1:
            self._parents.pop()

    def _on_gradient(self, tensors: Any, parents: tuple[str, ...], entering: bool) -> None:
        """When the gradient of any of ``tensors`` (through tuples, lists and dicts) is
        computed, the backward pass counts under ``parents``. One tensor can be the output of
        nested modules and the input of the next: the innermost module entered wins, else
        the outermost one left."""
        from torch import Tensor

        for t in _tensors_in(tensors):
            if not (isinstance(t, Tensor) and t.requires_grad):
                continue
            marks = self._gradient_marks.get(t)
            if marks is None:
                marks = self._gradient_marks[t] = _GradientMarks()
                t.register_hook(functools.partial(self._set_backward_parents, marks))
            (marks.entering if entering else marks.leaving).append(parents)

    def _set_backward_parents(self, marks: _GradientMarks, grad: Any) -> None:
        if marks.entering:
            self._backward_parents = max(marks.entering, key=len)
        elif marks.leaving:
            self._backward_parents = min(marks.leaving, key=len)

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self._parents = ["Global"]
        self._backward_parents = ("Global",)
        self._names, self._modules_by_name = {}, {}
        nn_module = sys.modules.get("torch.nn.modules.module")
        if nn_module is not None:
            self._hooks = [nn_module.register_module_forward_pre_hook(self._enter_module),
                           nn_module.register_module_forward_hook(self._leave_module)]
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
        if self.display:
            sys.stdout.write(self.get_table() + "\n")  # display=True's documented output


def _in_backward() -> bool:
    """Whether a backward pass is running on this call stack."""
    from torch.autograd import _engine

    return _engine.current_graph_task_id() != -1


def _tensors_in(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return [value]


def _human(flops: int) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if flops >= size:
            return f"{flops / size:.3f}{unit}"
    return str(flops)
