"""The short-time Fourier transform and its inverse: ``torch.stft`` and ``torch.istft``.

Both are compositions of operators, so autograd differentiates them through their parts:
``stft`` pads the signal (``center``), cuts it into overlapping frames (``unfold``, a view),
multiplies each by the window (zero-padded to ``n_fft`` around its centre) and transforms the
frames with ``aten::_fft_r2c`` (real signal and window, onesided) or ``aten::_fft_c2c``.
``istft`` inverts each frame's transform, windows the frames again, adds them back together
where they overlap (a ``scatter_add`` over the frames' sample positions) and divides by the
overlap-added squared window, PyTorch's least-squares inverse.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core import config as _config
from .._core.tensor import Tensor
from . import (
    complex_views as _cv,
    creation as _creation,
    factories as _fac,
    indexing as _indexing,
    shape as _shape,
    spectral as _spectral,
)
from .elementwise import where

__all__ = ["istft", "stft"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")
_warned: set[str] = set()  # PyTorch warns about a missing window once per process


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=_config.external_stacklevel())


def _pad_index(size: int, pad: int, mode: str, device: Any) -> Tensor:
    """The input positions the ``size + 2 * pad`` samples of a padded signal read."""
    positions = _creation.arange(-pad, size + pad, device=device)
    if mode == "reflect":  # ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ...
        period = 2 * (size - 1)
        folded = positions.abs().remainder(period)
        return where(folded >= size, period - folded, folded)
    if mode == "replicate":
        return positions.clamp(0, size - 1)
    return positions.remainder(size)  # circular


def _pad_signal(x: Tensor, pad: int, mode: str) -> Tensor:
    """``x`` (..., L) padded by ``pad`` samples at both ends of its last dim, as
    ``F.pad(x, [pad, pad], mode)`` pads it."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    size = x.shape[-1]
    if mode == "constant":
        zeros = _fac.zeros((*x.shape[:-1], pad), dtype=x.dtype, device=x.device)
        return _shape.cat([zeros, x, zeros], -1)
    if (mode == "reflect" and pad >= size) or (mode == "circular" and pad > size):
        # F.pad sees the signal as (batch, 1, L)
        shown = [1, 1, size] if x.ndim == 1 else [x.shape[0], 1, size]
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({pad}, {pad}) at dimension 2 "
                           f"of input {shown}")
    return _indexing.index_select(x, -1, _pad_index(size, pad, mode, x.device))


def _centred_window(window: Tensor | None, win_length: int, n_fft: int, dtype: Any,
                    device: Any) -> Tensor:
    """The window (ones when none is given) zero-padded on both sides to ``n_fft``."""
    if window is None:
        window = _fac.ones((win_length,), dtype=dtype, device=device)
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    parts = [_fac.zeros((left,), dtype=window.dtype, device=window.device), window,
             _fac.zeros((n_fft - win_length - left,), dtype=window.dtype, device=window.device)]
    return _shape.cat(parts, 0)


def _frame_positions(n_frames: int, n_fft: int, hop: int, device: Any) -> Tensor:
    """(n_frames * n_fft,) int64: where each sample of each frame lies in the signal."""
    starts = _creation.arange(n_frames, device=device) * hop
    return (starts.unsqueeze(1) + _creation.arange(n_fft, device=device)).reshape(-1)


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform of a 1-d signal or a batch of them ``(B, L)``:
    complex ``(B?, n_fft // 2 + 1, frames)`` (onesided) or ``(B?, n_fft, frames)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        _warn_once("stft return_complex", "stft with return_complex=False is deprecated. In a "
                   "future pytorch release, stft will return complex tensors for all inputs, "
                   "and return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format.")
    if window is None:
        _warn_once("stft window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce "
                   "spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    x = input if input.ndim == 2 else input.unsqueeze(0)  # (B, L)
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    length = x.shape[-1]
    shown = "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"
    where = (f"stft({input.type()}{list(x.shape) if input.ndim == 2 else [length]}, "
             f"n_fft={n_fft}, hop_length={hop}, win_length={win}, window={shown}, "
             f"normalized={int(normalized)}, onesided={onesided}, "
             f"return_complex={int(return_complex)}, align_to_window={align_to_window}) : ")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"{where}expected a tensor of floating point or complex values")
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{where}expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{where}expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{where}expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(f"{where}expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size {list(window.shape)}")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if align_to_window and win < n_fft:
        # frame t's window (centred in its n_fft samples) starts at t * hop_length: the
        # signal moves right by the window's left padding, zeros fill both ends
        left = (n_fft - win) // 2
        x = _shape.cat([_fac.zeros((x.shape[0], left), dtype=x.dtype, device=x.device), x,
                        _fac.zeros((x.shape[0], n_fft - win - left), dtype=x.dtype,
                                   device=x.device)], -1)
    frames = x.unfold(-1, n_fft, hop)  # (B, frames, n_fft)
    tapered = frames * _centred_window(window, win, n_fft, x.dtype, x.device)
    code = 1 if normalized else 0
    if complex_in:
        spectrum = _spectral.fft_c2c(_spectral.promote(tapered, "stft", True), [-1], code, True)
    else:  # a real signal and window: the real transform, onesided or both sides
        spectrum = _spectral.fft_r2c(tapered, [-1], code, onesided)
    spectrum = spectrum.transpose(-1, -2)  # (B, freq, frames)
    if input.ndim == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if return_complex else _cv.view_as_real(spectrum)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of :func:`stft`: the signal whose windowed frames have these spectra, by
    overlap-add divided by the overlap-added squared window."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        _warn_once("istft window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=torch.ones(n_fft, device=<device>)`.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a 2D or 3D complex tensor, but got {input.ndim}D")
    spectra = input if input.ndim == 3 else input.unsqueeze(0)  # (B, freq, frames)
    freq, n_frames = spectra.shape[-2], spectra.shape[-1]
    if onesided is None:
        onesided = freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != freq:
            raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of "
                               f"the input tensor to match n_fft / 2 + 1 when onesided=True, "
                               f"but got {freq}")
    elif n_fft != freq:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {freq}")
    if not (0 < hop <= win):
        raise RuntimeError("istft expected 0 < hop_length <= win_length")
    if not (0 < win <= n_fft):
        raise RuntimeError("istft expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError("istft expected a 1D window tensor of size equal to win_length")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    real_dtype = input.dtype.to_real()
    window_ = _centred_window(window, win, n_fft, real_dtype, input.device)
    columns = spectra.transpose(-1, -2)  # (B, frames, freq)
    code = 1 if normalized else 2  # normalized: the forward scaled by 1/sqrt(n) already
    if return_complex:
        frames = _spectral.fft_c2c(columns, [-1], code, False)
    else:
        if not onesided:  # a full spectrum's upper half mirrors the lower one
            columns = columns.narrow(-1, 0, n_fft // 2 + 1)
        frames = _spectral.fft_c2r(columns, [-1], code, n_fft)
    frames = frames * window_  # (B, frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    positions = _frame_positions(n_frames, n_fft, hop, input.device)
    batch = frames.shape[0]
    signal = _fac.zeros((batch, total), dtype=frames.dtype, device=frames.device)
    signal = _indexing.scatter_add(signal, 1, positions.expand(batch, -1),
                                   frames.reshape(batch, -1))
    squared = (window_.abs() ** 2 if window_.is_complex() else window_ * window_)
    envelope = _fac.zeros((total,), dtype=squared.dtype, device=squared.device)
    envelope = _indexing.scatter_add(envelope, 0, positions, squared.expand(n_frames, -1)
                                     .reshape(-1))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end_in = min(end, total)
    signal = signal.narrow(-1, start, max(end_in - start, 0))
    envelope = envelope.narrow(0, start, max(end_in - start, 0))
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: {float(envelope.abs().min()):g}; "
                           "the window and hop_length do not satisfy the nonzero overlap-add "
                           "constraint")
    signal = signal / envelope
    if end > end_in:  # a requested length past the frames: zeros, as PyTorch pads
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning,
                      stacklevel=_config.external_stacklevel())
        signal = _spectral.resize_dim(signal, 1, end - start)
    if input.ndim == 2:
        signal = signal.squeeze(0)
    return signal


METHODS = {"stft": stft, "istft": istft}
