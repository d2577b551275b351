"""``torch.onnx.errors``: what the exporter raises."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """The model could not be exported to ONNX."""


class UnsupportedOperatorError(OnnxExporterError):
    """The traced graph has an operator the exporter has no ONNX translation for.

    :param name: the operator (``"aten::cumsum"``).
    :param version: the ONNX opset asked for.
    :param supported_version: an opset that has it, or None.
    """

    def __init__(self, name: str, version: int, supported_version: int | None = None, *,
                 registered_symbolic: bool = False) -> None:
        if registered_symbolic:
            message = (f"Exporting the operator '{name}' to ONNX opset version {version} is "
                       "not supported: its symbolic function, registered with "
                       "torch.onnx.register_custom_op_symbolic, is written for PyTorch's "
                       "TorchScript exporter, which Plait's exporter does not run.")
        elif supported_version is not None:
            message = (f"Exporting the operator '{name}' to ONNX opset version {version} is "
                       f"not supported. Support for this operator was added in version "
                       f"{supported_version}, try exporting with this version.")
        else:
            message = (f"Exporting the operator '{name}' to ONNX opset version {version} is "
                       "not supported by Plait's exporter (torch.onnx): rewrite that part of "
                       "the model with supported operators, or report it as a missing row "
                       "of the operator table.")
        super().__init__(message)
        self.name = name
        self.version = version
