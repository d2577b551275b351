"""Quantized tensors: ``torch.quantize_per_tensor``, ``torch.quantize_per_channel``,
``torch.dequantize``, the ``torch.qscheme`` values and the methods of a quantized tensor
(``int_repr``, ``q_scale``, ``q_per_channel_scales``...).

A quantized tensor is a :class:`QuantizedTensor`: a wrapper subclass whose dtype is
``torch.qint8``/``quint8``/``qint32`` and whose own storage holds nothing; it carries the plain
integer tensor of its values (``int8``/``uint8``/``int32``) and the quantization parameters
beside it. Its ``__torch_dispatch__`` serves the operators that only move elements (views,
``clone``, ``detach``) on the integers and refuses the rest with PyTorch's message: quantized
arithmetic happens in the modules of ``torch.ao.nn.quantized``, on the integers and parameters.
The arithmetic is PyTorch's CPU kernels': ``q = round_half_even(fma(x, 1/scale, zero_point))``
clamped to the dtype's range, with ``1/scale`` rounded to float32, and
``x = (q - zero_point) * float32(scale)``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

from ._core import dtype as _dtype
from ._core.layout import _Named
from ._core.tensor import Tensor

__all__ = [
    "QuantizedTensor",
    "dequantize",
    "per_channel_affine",
    "per_channel_affine_float_qparams",
    "per_channel_symmetric",
    "per_tensor_affine",
    "per_tensor_symmetric",
    "qscheme",
    "quantize_per_channel",
    "quantize_per_tensor",
    "quantize_per_tensor_dynamic",
]


class qscheme(_Named):
    """A quantization scheme (``torch.per_tensor_affine``...): a named singleton, pickled as the
    attribute ``torch.<name>`` so unpickling returns the singleton."""

    __slots__ = ()


qscheme.__module__ = "torch"

QSCHEMES: dict[str, qscheme] = {name: qscheme(name) for name in (
    "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams")}
per_tensor_affine = QSCHEMES["per_tensor_affine"]
per_channel_affine = QSCHEMES["per_channel_affine"]
per_tensor_symmetric = QSCHEMES["per_tensor_symmetric"]
per_channel_symmetric = QSCHEMES["per_channel_symmetric"]
per_channel_affine_float_qparams = QSCHEMES["per_channel_affine_float_qparams"]

_QINT8 = _dtype.NAMED_ONLY["qint8"]
_QUINT8 = _dtype.NAMED_ONLY["quint8"]
_QINT32 = _dtype.NAMED_ONLY["qint32"]
# quantized dtype -> (the integer dtype of its values, smallest value, largest value)
QUANTIZED_DTYPES: dict[_dtype.dtype, tuple[_dtype.dtype, int, int]] = {
    _QINT8: (_dtype.int8, -128, 127),
    _QUINT8: (_dtype.uint8, 0, 255),
    _QINT32: (_dtype.int32, -(2 ** 31), 2 ** 31 - 1),
}


# the names PyTorch's messages give the quantized dtypes
_SCALAR_TYPE_NAMES = {_QINT8: "QInt8", _QUINT8: "QUInt8", _QINT32: "QInt32"}


def _checked_qdtype(dtype: Any, function: str) -> tuple[_dtype.dtype, int, int]:
    row = QUANTIZED_DTYPES.get(dtype)
    if row is None:
        raise RuntimeError(f"{function}: dtype must be one of torch.qint8, torch.quint8, "
                           f"torch.qint32, got {dtype!r}")
    return row


def _float_input(x: Any, function: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{function}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {str(x.dtype)[6:].title()}")
    return x.detach()


def quantize_values(x: Tensor, scale: Any, zero_point: Any, dtype: _dtype.dtype) -> Tensor:
    """The integers of ``x`` quantized with ``scale``/``zero_point`` (floats, or tensors that
    broadcast against ``x``), as ``dtype``'s integer type: ``round(fma(x, 1/scale, zp))``
    clamped, with ``1/scale`` in float32 (PyTorch's CPU kernels). ``x * inv`` is exact in
    float64 (two float32 factors) and adding a small integer keeps it exact, so one rounding to
    float32 afterwards is the fused multiply-add's."""
    import torch

    int_dtype, low, high = QUANTIZED_DTYPES[dtype]
    if isinstance(scale, Tensor):
        inverse = torch.reciprocal(scale.to(torch.float32)).to(torch.float64)
    else:
        inverse = float(torch.reciprocal(torch.tensor(scale, dtype=torch.float32)))
    if isinstance(zero_point, Tensor):
        zero_point = zero_point.to(torch.float64)
    fused = (x.to(torch.float64) * inverse + zero_point).to(torch.float32)
    return torch.round(fused).clamp_(low, high).to(int_dtype)


def _new(cls: type, qdata: Tensor, dtype: _dtype.dtype, scheme: qscheme, scales: Any,
         zero_points: Any, axis: int | None) -> QuantizedTensor:
    out = Tensor._make_wrapper_subclass(cls, qdata.shape, dtype=dtype,  # type: ignore
                                        device=qdata.device)
    out._qdata = qdata
    out._qscheme = scheme
    out._scales = scales
    out._zero_points = zero_points
    out._axis = axis
    return out


class QuantizedTensor(Tensor):
    """A quantized tensor (PyTorch's are plain ``torch.Tensor``\\s with a quantized dtype; here a
    subclass, so ``isinstance(q, torch.Tensor)`` holds but ``type(q) is torch.Tensor`` does not).
    """

    # slots, so that __dict__ holds only the user's attributes, as on any tensor
    __slots__ = ("_axis", "_qdata", "_qscheme", "_scales", "_zero_points")
    _qdata: Tensor
    _qscheme: qscheme
    _scales: Any  # a float (per tensor) or a float64 tensor (per channel)
    _zero_points: Any  # an int (per tensor) or an int64 tensor (per channel)
    _axis: int | None

    @property
    def is_quantized(self) -> bool:  # type: ignore[override]
        return True

    def qscheme(self) -> qscheme:
        """The quantization scheme (``torch.per_tensor_affine``, ``torch.per_channel_affine``)."""
        return self._qscheme

    def int_repr(self) -> Tensor:
        """A copy of the integers (``uint8`` for quint8, ``int8`` for qint8, ``int32`` for
        qint32)."""
        return self._qdata.clone()

    def to(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """The tensor itself when nothing changes (its own dtype, its device); a copy for
        ``copy=True``; another dtype or device is refused (see :func:`_to_copy`)."""
        wanted = [a for a in (*args, *kwargs.values()) if a is not None and a is not False]
        if wanted and all(a is self.dtype or str(a).split(":")[0] == self.device.type
                          for a in wanted if a is not True):
            return _to_copy(self) if True in wanted else self
        dtypes = [a for a in wanted if isinstance(a, _dtype.dtype)]
        devices = [a for a in wanted if not isinstance(a, (_dtype.dtype, bool))]
        return _to_copy(self, dtype=dtypes[0] if dtypes else None,
                        device=devices[0] if devices else None)

    def item(self) -> float:
        """The one element's float value."""
        return self.dequantize().item()

    def __float__(self) -> float:
        return float(self.item())

    def tolist(self) -> Any:
        raise RuntimeError("load_scalar: invalid type")  # (PyTorch's answer too)

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError(f"Got unsupported ScalarType {_SCALAR_TYPE_NAMES[self.dtype]}")

    def _per_tensor_only(self, name: str) -> None:
        if self._axis is not None:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerTensorAffine to be true, "
                               f"but got false.  ({name} of a {self._qscheme!r} tensor)")

    def _per_channel_only(self, name: str) -> None:
        if self._axis is None:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerChannelAffine || "
                               f"quantizer->qscheme() == kPerChannelAffineFloatQParams to be "
                               f"true, but got false.  ({name} of a {self._qscheme!r} tensor)")

    def q_scale(self) -> float:
        """The scale of a per-tensor quantized tensor."""
        self._per_tensor_only("q_scale")
        return self._scales

    def q_zero_point(self) -> int:
        """The zero point of a per-tensor quantized tensor."""
        self._per_tensor_only("q_zero_point")
        return self._zero_points

    def q_per_channel_scales(self) -> Tensor:
        """The scales of a per-channel quantized tensor (float64)."""
        self._per_channel_only("q_per_channel_scales")
        return self._scales.clone()

    def q_per_channel_zero_points(self) -> Tensor:
        """The zero points of a per-channel quantized tensor (int64)."""
        self._per_channel_only("q_per_channel_zero_points")
        return self._zero_points.clone()

    def q_per_channel_axis(self) -> int:
        """The dimension whose slices have their own scale and zero point."""
        self._per_channel_only("q_per_channel_axis")
        return self._axis  # type: ignore[return-value]

    def _broadcast_params(self) -> tuple[Any, Any]:
        """Scales (float32) and zero points shaped to broadcast against the values."""
        import torch

        if self._axis is None:
            return float(torch.tensor(self._scales, dtype=torch.float32)), self._zero_points
        shape = [1] * self._qdata.dim()
        shape[self._axis] = -1
        return (self._scales.to(torch.float32).reshape(shape),
                self._zero_points.reshape(shape))

    def dequantize(self) -> Tensor:
        """The float32 values ``(q - zero_point) * scale`` (the scale rounded to float32)."""
        import torch

        scale, zero_point = self._broadcast_params()
        return (self._qdata.to(torch.int64) - zero_point).to(torch.float32) * scale

    def __repr__(self) -> str:
        from ._tensor_str import _add_suffixes, _tensor_str

        prefix = "tensor("
        values = self.dequantize()
        body = _tensor_str(values, len(prefix)) if values.numel() else "[]"
        suffixes = [f"size={tuple(self.shape)}", f"dtype={self.dtype!r}",
                    f"quantization_scheme={self._qscheme!r}"]
        if self._axis is None:
            suffixes += [f"scale={self._scales!r}", f"zero_point={self._zero_points!r}"]
        else:
            suffixes += [f"scale={self._scales!r}", f"zero_point={self._zero_points!r}",
                         f"axis={self._axis}"]
        if self.requires_grad:
            suffixes.append("requires_grad=True")
        return _add_suffixes(prefix + body, suffixes, len(prefix))

    def _quantizer_params(self) -> tuple[Any, ...]:
        """What a checkpoint records of the quantizer, in PyTorch's form: ``(qscheme, scale,
        zero_point)`` or ``(qscheme, scales, zero_points, axis)``."""
        if self._axis is None:
            return (self._qscheme, self._scales, self._zero_points)
        return (self._qscheme, self._scales, self._zero_points, self._axis)

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_quantized, self._rebuild_args())

    def _rebuild_args(self) -> tuple[Any, ...]:
        """What :func:`_rebuild_quantized` takes (plain ``pickle``; ``torch.save`` writes
        PyTorch's ``torch._utils._rebuild_qtensor`` form instead)."""
        return (self._qdata, self.dtype._name, self._qscheme._name, self._scales,
                self._zero_points, self._axis)

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        # torch.equal is a composite of comparisons here; on quantized tensors it compares the
        # schemes, parameters and integers, as PyTorch's does
        if getattr(func, "__name__", None) == "equal" and len(args) == 2 and not kwargs:
            return _equal(*args)
        return super().__torch_function__(func, types, args, kwargs)

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        name = f"{func.namespace}::{func._opname}"
        source = args[0] if args else None
        if isinstance(source, QuantizedTensor):
            rearrange = _REARRANGING.get(name)
            if rearrange is not None and (source._axis is None or rearrange is _SAME_LAYOUT):
                qdata = func(source._qdata, *args[1:], **kwargs)
                return _new(cls, qdata, source.dtype, source._qscheme, source._scales,
                            source._zero_points, source._axis)
            special = _SPECIAL_OPS.get(name)
            if special is not None:
                return special(*args, **kwargs)
        raise NotImplementedError(
            f"Could not run '{name}.{func._overloadname}' with arguments from the "
            f"'QuantizedCPU' backend. Plait's quantized tensors hold their integers and "
            f"quantization parameters; compute on q.dequantize() or use the modules of "
            f"torch.ao.nn.quantized")


def _equal(a: Any, b: Any) -> bool:
    """``torch.equal`` of quantized tensors: same scheme, parameters and integers."""
    import torch

    if not (isinstance(a, QuantizedTensor) and isinstance(b, QuantizedTensor)):
        raise RuntimeError("torch.equal of a quantized and a non-quantized tensor")
    if a.dtype is not b.dtype or a._qscheme is not b._qscheme or a._axis != b._axis:
        return False
    if a._axis is None:
        same_params = a._scales == b._scales and a._zero_points == b._zero_points
    else:
        same_params = (torch.equal(a._scales, b._scales)
                       and torch.equal(a._zero_points, b._zero_points))
    return bool(same_params and torch.equal(a._qdata, b._qdata))


# Operators that only move elements: applied to the integers, keeping the parameters. A
# per-channel tensor keeps its axis only through those that keep the layout (_SAME_LAYOUT).
_SAME_LAYOUT = object()
_MOVES_ELEMENTS = object()
_REARRANGING: dict[str, object] = {
    **dict.fromkeys(("aten::detach", "aten::clone", "aten::alias", "aten::contiguous",
                     "aten::lift_fresh"), _SAME_LAYOUT),
    **dict.fromkeys(("aten::view", "aten::_unsafe_view", "aten::reshape", "aten::t",
                     "aten::transpose", "aten::permute", "aten::select", "aten::slice",
                     "aten::squeeze", "aten::unsqueeze", "aten::flatten", "aten::expand",
                     "aten::narrow"), _MOVES_ELEMENTS),
}
def _to_copy(source: QuantizedTensor, dtype: Any = None, layout: Any = None,
             device: Any = None, **_: Any) -> QuantizedTensor:
    """``to``/``float()``/``cpu()`` of a quantized tensor: a copy on the same device; another
    dtype is refused, as in PyTorch (``dequantize()`` gives the float values)."""
    if dtype is not None and dtype is not source.dtype:
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like "
                           "torch.quint8")
    if device is not None and str(device).split(":")[0] != source.device.type:
        raise NotImplementedError(f"Plait's quantized tensors live on the CPU only (asked for "
                                  f"{device})")
    return _new(QuantizedTensor, source._qdata.clone(), source.dtype, source._qscheme,
                source._scales, source._zero_points, source._axis)


_SPECIAL_OPS: dict[str, Callable[..., Any]] = {"aten::equal": _equal,
                                               "aten::_to_copy": _to_copy}


def _scalar(value: Any, kind: type, what: str) -> Any:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"quantize_per_tensor: {what} must hold one element")
        return kind(value.item())
    return kind(value)


def quantize_per_tensor(input: Any, scale: Any, zero_point: Any, dtype: Any) -> Any:
    """Quantize ``input`` (float) with one ``scale`` and ``zero_point`` into ``dtype``
    (``torch.quint8``, ``torch.qint8`` or ``torch.qint32``); a list of tensors is quantized
    with lists of scales and zero points (tensors), as in PyTorch."""
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(x, s, z, dtype)
                for x, s, z in zip(input, scale, zero_point, strict=True)]
    _checked_qdtype(dtype, "quantize_per_tensor")
    x = _float_input(input, "quantize_per_tensor")
    scale_value = _scalar(scale, float, "scale")
    zero_point_value = _scalar(zero_point, int, "zero_point")
    if isinstance(scale, Tensor):  # PyTorch reads a tensor scale as float32
        import torch

        scale_value = float(torch.tensor(scale_value, dtype=torch.float32))
    qdata = quantize_values(x, scale_value, zero_point_value, dtype)
    return _new(QuantizedTensor, qdata, dtype, per_tensor_affine, scale_value,
                zero_point_value, None)


def quantize_per_tensor_dynamic(input: Tensor, dtype: Any, reduce_range: bool) -> Any:
    """Quantize ``input`` with the scale and zero point its own minimum and maximum call for
    (``torch.quint8`` or ``torch.qint8``; ``reduce_range`` halves the integer range)."""
    _, low, high = _checked_qdtype(dtype, "quantize_per_tensor_dynamic")
    x = _float_input(input, "quantize_per_tensor_dynamic")
    low_value = float(x.min()) if x.numel() else 0.0
    high_value = float(x.max()) if x.numel() else 0.0
    scale, zero_point = choose_qparams(low_value, high_value, low, high, reduce_range)
    return quantize_per_tensor(x, scale, zero_point, dtype)


# The smallest scale the dynamic kernels choose: float32(6.1e-5), about float16's smallest
# normal number (smaller scales are widened to it).
_SMALL_SCALE = 6.0999998822808266e-05


def choose_qparams(low: float, high: float, qmin: int, qmax: int,
                   reduce_range: bool = False) -> tuple[float, int]:
    """The affine ``(scale, zero_point)`` that maps ``[min(low, 0), max(high, 0)]`` onto
    ``[qmin, qmax]`` (halved when ``reduce_range``), as PyTorch's dynamic kernels choose them:
    the scale in double precision (0.1 when its float32 rounding would be 0 or have an infinite
    inverse; kernels use its float32 rounding), and the zero point from whichever end of the
    range represents its bound with less error, rounded half to even and clamped."""
    import numpy as np

    low, high = min(low, 0.0), max(high, 0.0)
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    scale = (high - low) / (qmax - qmin)
    with np.errstate(divide="ignore", over="ignore"):
        if np.float32(scale) == 0.0 or np.isinf(np.float32(1.0) / np.float32(scale)):
            scale = 0.1
    if scale < _SMALL_SCALE:  # widened to the smallest scale, keeping where zero falls
        amplifier = _SMALL_SCALE / scale
        scale = _SMALL_SCALE
        if low == 0.0:
            high = scale * (qmax - qmin)
        elif high == 0.0:
            low = -scale * (qmax - qmin)
        else:
            low, high = low * amplifier, high * amplifier
    from_low, from_high = qmin - low / scale, qmax - high / scale
    error_low = abs(qmin) - abs(low / scale)
    error_high = abs(qmax) - abs(high / scale)
    initial = from_low if error_low < error_high else from_high
    return scale, int(min(max(round(initial), qmin), qmax))


def quantize_per_channel(input: Tensor, scales: Tensor, zero_points: Tensor, axis: int,
                         dtype: Any) -> QuantizedTensor:
    """Quantize ``input`` with one scale and zero point per slice along ``axis``."""
    import torch

    _checked_qdtype(dtype, "quantize_per_channel")
    x = _float_input(input, "quantize_per_channel")
    if not (isinstance(scales, Tensor) and isinstance(zero_points, Tensor)):
        raise TypeError("quantize_per_channel(): scales and zero_points must be tensors")
    if not -x.dim() <= axis < max(x.dim(), 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-x.dim()}, {x.dim() - 1}], but got {axis})")
    axis %= x.dim()
    channels = x.shape[axis]
    if scales.dim() != 1 or scales.numel() != channels:
        raise RuntimeError(f"length of scales must equal to channel, expected {channels} got, "
                           f"{scales.numel()}")
    if zero_points.dim() != 1 or zero_points.numel() != channels:
        raise RuntimeError(f"length of zero_points must equal to channel expected {channels} "
                           f"got, {zero_points.numel()}")
    scales64 = scales.detach().to(torch.float64).clone()
    zero_points64 = zero_points.detach().to(torch.int64).clone()
    shape = [1] * x.dim()
    shape[axis] = -1
    qdata = quantize_values(x, scales64.reshape(shape), zero_points64.reshape(shape), dtype)
    return _new(QuantizedTensor, qdata, dtype, per_channel_affine, scales64, zero_points64,
                axis)


def dequantize(tensor: Any) -> Any:
    """The float values of a quantized tensor (a float tensor is returned as it is; a list
    gives a list)."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    if isinstance(tensor, QuantizedTensor):
        return tensor.dequantize()
    if isinstance(tensor, Tensor) and tensor.dtype is _dtype.float32:
        return tensor
    raise RuntimeError(f"dequantize() expects a quantized tensor or a float tensor, got "
                       f"{getattr(tensor, 'dtype', type(tensor).__name__)}")


def _rebuild_quantized(qdata: Any, dtype_name: Any, scheme_name: Any, scales: Any,
                       zero_points: Any, axis: Any) -> QuantizedTensor:
    """Unpickle a quantized tensor (what ``torch.save`` wrote), checking every part: a
    checkpoint is untrusted input."""
    dtype = _dtype.NAMED_ONLY.get(dtype_name) if isinstance(dtype_name, str) else None
    scheme = QSCHEMES.get(scheme_name) if isinstance(scheme_name, str) else None
    row = QUANTIZED_DTYPES.get(dtype) if dtype is not None else None  # type: ignore[arg-type]
    if row is None or scheme is None or not isinstance(qdata, Tensor) \
            or type(qdata) is not Tensor or qdata.dtype is not row[0]:
        raise pickle.UnpicklingError("a quantized tensor's record is malformed")
    if axis is None:
        if not (isinstance(scales, float) and isinstance(zero_points, int)):
            raise pickle.UnpicklingError("a quantized tensor's scale or zero point is malformed")
    elif not (isinstance(axis, int) and 0 <= axis < qdata.dim()
              and isinstance(scales, Tensor) and isinstance(zero_points, Tensor)
              and scales.shape == (qdata.shape[axis],)
              and zero_points.shape == (qdata.shape[axis],)):
        raise pickle.UnpicklingError("a quantized tensor's per-channel parameters are malformed")
    return _new(QuantizedTensor, qdata, dtype, scheme, scales, zero_points,  # type: ignore
                axis)


_SCHEME_OF_PARAMS = {3: (per_tensor_affine, per_tensor_symmetric),
                     4: (per_channel_affine, per_channel_symmetric)}


def rebuild_qtensor(view_of: Callable[..., Tensor], storage: Any, storage_offset: Any,
                    size: Any, stride: Any, quantizer_params: Any) -> QuantizedTensor:
    """A quantized tensor from a checkpoint's record (``torch._utils._rebuild_qtensor``):
    ``storage`` typed by the quantized dtype, viewed as its integers by ``view_of`` (which
    checks the view against the storage); ``quantizer_params`` as
    :meth:`QuantizedTensor._quantizer_params` writes them. A checkpoint is untrusted input:
    every part is checked."""
    dtype = getattr(storage, "dtype", None)
    row = QUANTIZED_DTYPES.get(dtype) if isinstance(dtype, _dtype.dtype) else None
    if row is None:
        raise pickle.UnpicklingError("a quantized tensor's storage must be a QInt8Storage, "
                                     "QUInt8Storage or QInt32Storage")
    schemes = _SCHEME_OF_PARAMS.get(len(quantizer_params), ()) if isinstance(
        quantizer_params, tuple) else ()
    if not any(quantizer_params[0] is scheme for scheme in schemes):
        raise pickle.UnpicklingError(f"unsupported quantizer in checkpoint (Plait reads per "
                                     f"tensor and per channel affine or symmetric ones): "
                                     f"{str(quantizer_params)[:200]}")
    qdata = view_of(storage, storage_offset, size, stride, row[0])
    scheme = quantizer_params[0]
    if len(quantizer_params) == 3:
        _, scale, zero_point = quantizer_params
        if not (isinstance(scale, float) and isinstance(zero_point, int)):
            raise pickle.UnpicklingError("a quantized tensor's scale or zero point is malformed")
        return _new(QuantizedTensor, qdata, dtype, scheme, scale, zero_point, None)
    _, scales, zero_points, axis = quantizer_params
    if not (isinstance(axis, int) and 0 <= axis < qdata.dim()
            and type(scales) is Tensor and type(zero_points) is Tensor
            and tuple(scales.shape) == (qdata.shape[axis],)
            and tuple(zero_points.shape) == (qdata.shape[axis],)):
        raise pickle.UnpicklingError("a quantized tensor's per-channel parameters are malformed")
    import torch

    return _new(QuantizedTensor, qdata, dtype, scheme, scales.to(torch.float64),
                zero_points.to(torch.int64), axis)
