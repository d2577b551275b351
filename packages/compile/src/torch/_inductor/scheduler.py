"""Group an aten graph's nodes into kernel groups and library calls.

Pointwise nodes that follow one another in the graph's order and produce the same shape form
one :class:`KernelGroup`; any other node (a reduction, a view, a fallback) is a library call and
closes the group before it. A group's inputs are the values it reads from outside (graph
inputs, views of them, other steps' results: each may broadcast to the group's shape); its
outputs are the members that anything outside the group reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from .lowering import Lowering, lowering_of

#: The dtypes kernels are generated for, with their C++ type.
C_TYPES: dict[Any, str] = {
    torch.float32: "float", torch.float64: "double", torch.int32: "int32_t",
    torch.int64: "int64_t", torch.int16: "int16_t", torch.int8: "int8_t",
    torch.uint8: "uint8_t", torch.bool: "bool",
}

#: Dtypes fused on other devices than the CPU only: their generators store them in 16 bits
#: and compute in float (the CPU's C++ has no type for them).
DEVICE_ONLY_TYPES = frozenset({torch.float16, torch.bfloat16})


def _generated(dtype: Any, device: Any) -> bool:
    """Whether kernels are generated for ``dtype`` on ``device``."""
    return dtype in C_TYPES or (dtype in DEVICE_ONLY_TYPES
                                and getattr(device, "type", "cpu") != "cpu")


#: Keyword arguments a fused node may carry (others make the node a library call); a
#: ``rounding_mode`` only when it is None (true division).
_FUSABLE_KWARGS = {"alpha", "approximate", "dtype", "rounding_mode"}


@dataclass
class KernelGroup:
    """A fused chain of pointwise nodes run as one kernel."""

    index: int
    shape: tuple[Any, ...]
    device: Any
    members: list[Any] = field(default_factory=list)  # fx nodes, in graph order
    inputs: list[Any] = field(default_factory=list)  # fx nodes read from outside
    outputs: list[Any] = field(default_factory=list)  # members read outside the group
    #: A last-dimension reduction of the group's last member, computed in the same pass (its
    #: node is then the last of ``outputs``).
    reduction: Any = None
    #: A ``native_layer_norm`` (or ``layer_norm``) over the last dimension of the group's last
    #: member (CPU only), computed in the same pass: its node is then the last of ``outputs``
    #: and its value the ``(out, mean, rstd)`` tuple (``out`` for ``layer_norm``); its weight
    #: and bias are inputs of the group.
    norm: Any = None

    def input_dtype(self, position: int) -> Any:
        """The dtype of the ``position``-th input."""
        return self.inputs[position].meta["val"].dtype

    # What a device backend's generator (the ``torch_backend_codegen`` hook) reads of the
    # compiler, so that it needs no private module of it.

    def lowering(self, node: Any) -> Lowering | None:
        """The lowering row of a member (its C template), as :mod:`.lowering` has it."""
        return lowering_of(node.target)

    @property
    def reduction_kind(self) -> str | None:
        """The accumulation of :attr:`reduction`: ``"sum"``, ``"max"``, ``"min"``, or None."""
        return None if self.reduction is None else FUSED_REDUCTIONS.get(self.reduction.target)

    @property
    def compile_in_background(self) -> bool:
        """Whether kernels build on a background thread while the first calls run in the
        interpreter (``torch._inductor.config.compile_in_background``)."""
        from . import config

        return bool(config.compile_in_background)

    def interpret(self, inputs: list[Any]) -> list[Any]:
        """Run the group in the fused interpreter (eager operators, block by block): what a
        generator calls for inputs its kernels do not take."""
        from .interpreter import run_group

        return run_group(self, inputs)


@dataclass
class Schedule:
    """The graph as steps: fx nodes (library calls) and kernel groups, in execution order."""

    steps: list[Any]
    groups: list[KernelGroup]


def _val(node: Any) -> Any:
    return node.meta.get("val") if hasattr(node, "meta") else None


def _fusable(node: Any) -> Lowering | None:
    """The node's pointwise row when the node can be generated, else ``None``."""
    if node.op != "call_function":
        return None
    row = lowering_of(node.target)
    if row is None or row.kind != "pointwise":
        return None
    val = _val(node)
    if not isinstance(val, torch.Tensor) or not _generated(val.dtype, val.device):
        return None
    if row.floating and not val.dtype.is_floating_point:
        return None
    if val.dtype == torch.bool and row.cast == "out":
        return None  # bool arithmetic has its own rules: leave it to the library
    if not set(node.kwargs) <= _FUSABLE_KWARGS or node.kwargs.get("rounding_mode") is not None:
        return None
    if node.target == torch.ops.aten._to_copy.default and "dtype" not in node.kwargs:
        return None
    has_tensor = False
    for arg in node.args:
        if hasattr(arg, "op"):
            arg_val = _val(arg)
            if not isinstance(arg_val, torch.Tensor) or not _generated(arg_val.dtype,
                                                                       arg_val.device):
                return None
            if arg_val.device != val.device:
                return None
            has_tensor = True
        elif arg is not None and not isinstance(arg, (bool, int, float)):
            return None
    return row if has_tensor else None


#: Reductions generated with their pointwise prologue: the C++ accumulation of each.
FUSED_REDUCTIONS: dict[Any, str] = {
    torch.ops.aten.sum.dim_IntList: "sum",
    torch.ops.aten.amax.default: "max",
    torch.ops.aten.amin.default: "min",
}


def _fusable_reduction(node: Any, group: KernelGroup | None) -> bool:
    """Whether ``node`` reduces the last dimension of ``group``'s last member (float)."""
    if group is None or group.reduction is not None or node.op != "call_function":
        return False
    if node.target not in FUSED_REDUCTIONS or node.args[0] is not group.members[-1]:
        return False
    val, source = _val(node), _val(node.args[0])
    if not isinstance(val, torch.Tensor) or val.dtype != source.dtype:
        return False
    if source.dtype not in (torch.float32, torch.float64) or source.dim() == 0:
        return False
    if node.kwargs.get("dtype") is not None or set(node.kwargs) - {"dtype"}:
        return False
    dims = node.args[1] if len(node.args) > 1 else None
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    return len(dims) == 1 and dims[0] in (-1, source.dim() - 1)


def _library_singletons(steps: list[Any], groups: list[KernelGroup]) -> list[KernelGroup]:
    """Turn CPU groups of one operator (and no fused reduction) back into library calls in
    ``steps``, unless ``config.cpu_single_op_groups``; the groups that stay, renumbered."""
    from . import config

    if config.cpu_single_op_groups:
        return groups
    kept: list[KernelGroup] = []
    for position, step in enumerate(steps):
        if not isinstance(step, KernelGroup):
            continue
        if (len(step.members) == 1 and step.reduction is None and step.norm is None
                and getattr(step.device, "type", "cpu") == "cpu"):
            steps[position] = step.members[0]
        else:
            step.index = len(kept)
            kept.append(step)
    return kept


#: The layer norms a group may end with: whether the node's value is the (out, mean, rstd)
#: tuple (``native_layer_norm``) or ``out`` alone (``layer_norm``, as make_fx records it).
NORMS: dict[Any, bool] = {
    torch.ops.aten.native_layer_norm.default: True,
    torch.ops.aten.layer_norm.default: False,
}


def norm_arguments(node: Any) -> tuple[Any, Any, float]:
    """``(weight, bias, eps)`` of a layer norm node, with the schema's defaults."""
    args = list(node.args[2:5])
    args += [None, None, 1e-5][len(args):]
    weight = node.kwargs.get("weight", args[0])
    bias = node.kwargs.get("bias", args[1])
    return weight, bias, node.kwargs.get("eps", args[2])


def norm_dtype(node: Any) -> Any:
    """The dtype of a layer norm node's results (out, mean and rstd share it)."""
    value = node.meta["val"]
    return (value[0] if NORMS[node.target] else value).dtype


def _fusable_norm(node: Any, group: KernelGroup | None) -> bool:
    """Whether ``node`` is a layer norm over the last dimension of ``group``'s last member,
    with weight and bias of that size (or None), all of one float dtype on the CPU."""
    from . import config

    if not config.fuse_layer_norm or group is None or group.reduction is not None \
            or group.norm is not None:
        return False
    if node.op != "call_function" or node.target not in NORMS or len(node.args) < 2:
        return False
    if set(node.kwargs) - {"weight", "bias", "eps", "cudnn_enable"}:
        return False
    if node.args[0] is not group.members[-1]:
        return False
    source = _val(node.args[0])
    normalized = node.args[1]
    weight, bias, eps = norm_arguments(node)
    if getattr(source, "device", None) is None or source.device.type != "cpu":
        return False
    if source.dtype not in (torch.float32, torch.float64) or source.dim() == 0:
        return False
    last = source.shape[-1]
    if not isinstance(last, int) or list(normalized) != [last] or not isinstance(eps, float):
        return False
    for param in (weight, bias):
        if param is None:
            continue
        val = _val(param)
        if not isinstance(val, torch.Tensor) or val.dtype != source.dtype \
                or val.device != source.device or tuple(val.shape) != (last,):
            return False
    values = _val(node)
    if not NORMS[node.target]:
        values = (values,)
    return isinstance(values, (tuple, list)) and len(values) == (3 if NORMS[node.target] else 1) \
        and all(isinstance(v, torch.Tensor) and v.dtype == source.dtype for v in values)


def schedule(gm: Any) -> Schedule:
    """Split ``gm``'s graph into library-call nodes and kernel groups."""
    steps: list[Any] = []
    groups: list[KernelGroup] = []
    current: KernelGroup | None = None
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if not node.users and node.op == "call_function" and _fusable(node):
            continue  # dead pointwise code
        if _fusable_norm(node, current):
            current.norm = node
            current = None  # the group ends with its layer norm
            continue
        if _fusable_reduction(node, current):
            current.reduction = node
            current = None  # the group ends with its reduction
            continue
        if _fusable(node) is None:
            current = None
            steps.append(node)
            continue
        val = _val(node)
        shape = tuple(val.shape)
        if current is None or current.shape != shape or current.device != val.device:
            current = KernelGroup(len(groups), shape, val.device)
            groups.append(current)
            steps.append(current)
        current.members.append(node)
    groups = _library_singletons(steps, groups)
    for group in groups:
        members = set(group.members)
        for node in group.members:
            for arg in node.args:
                if hasattr(arg, "op") and arg not in members and arg not in group.inputs:
                    group.inputs.append(arg)
            if any(user not in members and user is not group.reduction
                   and user is not group.norm for user in node.users):
                group.outputs.append(node)
        if group.reduction is not None:
            group.outputs.append(group.reduction)
        if group.norm is not None:
            for param in norm_arguments(group.norm)[:2]:
                if hasattr(param, "op") and param not in group.inputs:
                    group.inputs.append(param)
            group.outputs.append(group.norm)
    return Schedule(steps, groups)
