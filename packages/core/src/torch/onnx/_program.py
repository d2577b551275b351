"""``torch.onnx.ONNXProgram``: what ``export(..., dynamo=True)`` (PyTorch's default) returns:
the model as an ONNX ``ModelProto``, which it can save and run with onnxruntime."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["ONNXProgram"]


class ONNXProgram:
    """An exported model.

    :ivar model_proto: the ``onnx.ModelProto``.
    """

    def __init__(self, model_proto: Any, exported_program: Any = None) -> None:
        self.model_proto = model_proto
        self.exported_program = exported_program
        self._session: Any = None

    @property
    def model(self) -> Any:
        """The ONNX graph (``model_proto.graph``)."""
        return self.model_proto.graph

    def save(self, destination: str | os.PathLike[str] | Any, *,
             include_initializers: bool = True, keep_initializers_as_inputs: bool = False,
             external_data: bool | None = None) -> None:
        """Write the model to a path or a binary file object."""
        proto = self.model_proto
        if not include_initializers:
            proto = type(proto)()
            proto.CopyFrom(self.model_proto)
            del proto.graph.initializer[:]
        data = proto.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            with open(destination, "wb") as out:
                out.write(data)
        else:
            destination.write(data)

    def optimize(self) -> None:
        """Graph optimisations (none here: onnxruntime optimises when it loads the model)."""

    def release(self) -> None:
        """Drop the onnxruntime session made by calling the program."""
        self._session = None

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Run the model with onnxruntime on tensors; returns the outputs as tensors."""
        import torch
        from torch.jit._tracing import flatten

        try:
            import onnxruntime
        except ImportError as error:
            raise ImportError("running an ONNXProgram needs onnxruntime: pip install "
                              "onnxruntime") from error
        if self._session is None:
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        tensors: list[Any] = []
        flatten((args, kwargs), tensors, [], "input")
        names = [i.name for i in self._session.get_inputs()]
        feeds = {name: t.detach().cpu().numpy() for name, t in zip(names, tensors)}
        return [torch.from_numpy(out) for out in self._session.run(None, feeds)]

    def __repr__(self) -> str:
        inputs = [i.name for i in self.model_proto.graph.input]
        outputs = [o.name for o in self.model_proto.graph.output]
        return f"ONNXProgram(inputs={inputs}, outputs={outputs})"
