"""Custom symbolic functions: ``torch.onnx.register_custom_op_symbolic`` and the modules of
PyTorch's TorchScript exporter that code registering them imports (``symbolic_helper``,
``symbolic_opset<N>``).

PyTorch's older exporter translates each operator of a TorchScript graph with a *symbolic
function* ``fn(g, *values)`` that calls ``g.op("Onnx", ...)``. Plait's exporter translates the
recorded aten graph with its own table (:mod:`torch.onnx._ops`) and has no TorchScript graph to
give such a function. Registrations are kept, so that the packages that make them at import
(torchvision, for its detection operators) load and work; exporting a model that reaches a
registered operator raises ``UnsupportedOperatorError`` naming the registration, rather than
writing a wrong graph. The ``symbolic_opset<N>`` modules are empty namespaces for the same
imports: their per-operator functions belong to the TorchScript exporter.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["opset_module", "register_custom_op_symbolic", "registered",
           "unregister_custom_op_symbolic"]

# "namespace::op" -> {opset version: symbolic function}
_REGISTERED: dict[str, dict[int, Callable[..., Any]]] = {}
_OPSETS = range(7, 21)  # the symbolic_opset<N> modules PyTorch has
_opset_modules: dict[int, ModuleType] = {}


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn: Callable[..., Any],
                                opset_version: int) -> None:
    """Register ``symbolic_fn`` for operator ``symbolic_name`` ("namespace::op") from
    ``opset_version`` on (see the module docstring for what export does with it)."""
    namespace, sep, op = symbolic_name.partition("::")
    if not sep or not namespace or not op:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name "
                         "must match the format domain::name, and should start with a letter "
                         "and contain only alphanumerical characters")
    if namespace == "onnx":
        raise ValueError(f"Failed to register operator {symbolic_name}. onnx domain is not "
                         "allowed for custom ops")
    _REGISTERED.setdefault(symbolic_name, {})[int(opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Remove the registration of ``symbolic_name`` for ``opset_version``."""
    versions = _REGISTERED.get(symbolic_name, {})
    versions.pop(int(opset_version), None)
    if not versions:
        _REGISTERED.pop(symbolic_name, None)


def registered(kind: str) -> bool:
    """Whether a custom symbolic is registered for graph node ``kind`` ("ns::op[.overload]")."""
    return kind.partition(".")[0] in _REGISTERED


def opset_module(version: int) -> ModuleType | None:
    """The (empty) ``torch.onnx.symbolic_opset<version>`` namespace, or None."""
    if version not in _OPSETS:
        return None
    module = _opset_modules.get(version)
    if module is None:
        module = _opset_modules[version] = ModuleType(
            f"torch.onnx.symbolic_opset{version}",
            f"PyTorch's TorchScript-exporter symbolics of opset {version}: a namespace only "
            "(see torch.onnx._symbolics).")
    return module
