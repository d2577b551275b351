"""torch.fft, the window functions, torch.stft and torch.istft through the public API.

Expected values come from formulas written here: a direct O(n^2) discrete Fourier transform
(a matrix of exp(-2 pi i jk / n)), the window definitions, and a frame-by-frame STFT. Gradients
are checked with gradcheck in float64 (complex inputs and outputs as real pairs).
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import torch
from torch.autograd import gradcheck, gradgradcheck

F = torch.fft


def _rng() -> np.random.Generator:
    return np.random.default_rng(12)


def _dft(x: np.ndarray, axis: int, inverse: bool = False) -> np.ndarray:
    """The unscaled DFT along ``axis`` (sign +1 in the exponent for the inverse)."""
    n = x.shape[axis]
    k = np.arange(n)
    sign = 1 if inverse else -1
    matrix = np.exp(sign * 2j * np.pi * np.outer(k, k) / n)
    return np.moveaxis(np.tensordot(np.moveaxis(x, axis, -1), matrix, axes=([-1], [0])), -1,
                       axis)


def _dftn(x: np.ndarray, axes: list[int], inverse: bool = False) -> np.ndarray:
    for a in axes:
        x = _dft(x, a, inverse)
    return x


def _hermitian_full(half: np.ndarray, n: int, axis: int) -> np.ndarray:
    """The full spectrum of length n a onesided one (n // 2 + 1 entries along ``axis``)
    stands for: entries n // 2 + 1 .. n - 1 are the conjugates of n - k."""
    half = np.moveaxis(half, axis, -1)
    full = np.zeros(half.shape[:-1] + (n,), complex)
    full[..., : n // 2 + 1] = half[..., : n // 2 + 1]
    for k in range(n // 2 + 1, n):
        full[..., k] = np.conj(half[..., n - k])
    # a real signal's spectrum has real entries at 0 and n / 2: c2r reads only their real parts
    full[..., 0] = full[..., 0].real
    if n % 2 == 0:
        full[..., n // 2] = full[..., n // 2].real
    return np.moveaxis(full, -1, axis)


def _values(t: torch.Tensor) -> np.ndarray:
    return t.detach().resolve_conj().numpy()


def _close(t: torch.Tensor, expected: np.ndarray, tol: float = 1e-9) -> None:
    got = _values(t)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def _realified(fn, complex_input: bool):
    """``fn`` with complex inputs and outputs as real pairs (gradcheck takes real tensors)."""

    def wrapped(x: torch.Tensor) -> torch.Tensor:
        z = torch.view_as_complex(x) if complex_input else x
        y = fn(z)
        return torch.view_as_real(y) if y.is_complex() else y

    return wrapped


# -- complex-to-complex ----------------------------------------------------------------------


@pytest.mark.parametrize("norm, scale", [(None, 1.0), ("backward", 1.0), ("ortho", None),
                                         ("forward", "n")])
def test_fft_and_ifft_match_the_direct_dft_with_each_normalization(norm, scale) -> None:
    rng = _rng()
    x = rng.standard_normal((3, 7)) + 1j * rng.standard_normal((3, 7))
    n = 7
    forward = {None: 1.0, "backward": 1.0, "ortho": 1 / math.sqrt(n), "forward": 1 / n}[norm]
    inverse = {None: 1 / n, "backward": 1 / n, "ortho": 1 / math.sqrt(n), "forward": 1.0}[norm]
    t = torch.tensor(x)
    _close(F.fft(t, norm=norm), _dft(x, 1) * forward)
    _close(F.ifft(t, norm=norm), _dft(x, 1, inverse=True) * inverse)


def test_fft_trims_or_zero_pads_to_n_along_dim() -> None:
    rng = _rng()
    x = rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))
    padded = np.concatenate([x, np.zeros((3, 4))], 0)
    _close(F.fft(torch.tensor(x), n=8, dim=0), _dft(padded, 0))
    _close(F.fft(torch.tensor(x), n=2, dim=0), _dft(x[:2], 0))


def test_fftn_fft2_and_ifftn_transform_the_given_dims() -> None:
    rng = _rng()
    x = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    t = torch.tensor(x)
    _close(F.fftn(t), _dftn(x, [0, 1, 2]))
    _close(F.fft2(t), _dftn(x, [1, 2]))
    _close(F.fftn(t, dim=(2, 0)), _dftn(x, [0, 2]))
    _close(F.ifftn(t, s=(5, 2), dim=(1, 2)),
           _dftn(np.pad(x, ((0, 0), (0, 2), (0, 0)))[:, :, :2], [1, 2], inverse=True) / 10)
    # s alone names the last len(s) dims; -1 keeps a dim's size
    _close(F.fftn(t, s=(-1, 4)), _dftn(x, [1, 2]))
    # no dims: the input, promoted to complex
    _close(F.fftn(t, dim=()), x)


def test_real_and_integer_inputs_are_promoted_to_complex() -> None:
    assert F.fft(torch.randn(4)).dtype == torch.complex64
    assert F.fft(torch.randn(4, dtype=torch.float64)).dtype == torch.complex128
    assert F.fft(torch.arange(4)).dtype == torch.complex64
    assert F.rfft(torch.arange(4)).dtype == torch.complex64
    assert F.irfft(torch.randn(5, dtype=torch.complex128)).dtype == torch.float64
    assert F.hfft(torch.randn(5, dtype=torch.complex64)).dtype == torch.float32
    x = np.arange(6.0)
    _close(F.fft(torch.arange(6)), _dft(x, 0).astype(np.complex64), 1e-5)


def test_out_argument_receives_the_transform() -> None:
    x = torch.randn(6, dtype=torch.complex128)
    out = torch.empty(6, dtype=torch.complex128)
    result = F.fft(x, out=out)
    assert result is out
    _close(out, _dft(_values(x), 0))


# -- real transforms -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [6, 7])
def test_rfft_is_the_nonnegative_half_of_the_full_transform(n: int) -> None:
    x = _rng().standard_normal((2, n))
    _close(F.rfft(torch.tensor(x)), _dft(x, 1)[:, : n // 2 + 1])
    _close(F.rfft(torch.tensor(x), norm="forward"), _dft(x, 1)[:, : n // 2 + 1] / n)


@pytest.mark.parametrize("n", [6, 7])
def test_irfft_inverts_a_onesided_spectrum(n: int) -> None:
    rng = _rng()
    half = rng.standard_normal((3, n // 2 + 1)) + 1j * rng.standard_normal((3, n // 2 + 1))
    expected = _dft(_hermitian_full(half, n, 1), 1, inverse=True).real / n
    _close(F.irfft(torch.tensor(half), n=n), expected)
    # the default length is 2 * (m - 1)
    m = half.shape[1]
    default = _dft(_hermitian_full(half, 2 * (m - 1), 1), 1, inverse=True).real / (2 * (m - 1))
    _close(F.irfft(torch.tensor(half)), default)


def test_irfft_round_trips_rfft() -> None:
    x = torch.randn(4, 9, dtype=torch.float64)
    _close(F.irfft(F.rfft(x), n=9), _values(x))
    _close(F.irfftn(F.rfftn(x), s=(4, 9)), _values(x))
    _close(F.irfft2(F.rfft2(x, norm="ortho"), s=(4, 9), norm="ortho"), _values(x))


def test_rfftn_and_irfftn_over_several_dims() -> None:
    rng = _rng()
    x = rng.standard_normal((3, 4, 6))
    _close(F.rfftn(torch.tensor(x), dim=(0, 2)), _dftn(x, [0, 2])[:, :, :4])
    half = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    full = _hermitian_full(_dft(half, 0, inverse=True), 6, 1)  # inverse along dim 0 first
    _close(F.irfftn(torch.tensor(half), s=(3, 6)), _dft(full, 1, inverse=True).real / 18)


def test_hfft_and_ihfft_are_the_hermitian_pair() -> None:
    rng = _rng()
    n = 8
    half = rng.standard_normal((2, n // 2 + 1)) + 1j * rng.standard_normal((2, n // 2 + 1))
    # hfft: the (forward, unscaled) transform of the Hermitian signal the half describes
    hermitian = _hermitian_full(np.conj(half), n, 1)
    _close(F.hfft(torch.tensor(half), n=n), _dft(hermitian, 1, inverse=True).real)
    x = rng.standard_normal((2, n))
    _close(F.ihfft(torch.tensor(x)), _dft(x, 1, inverse=True)[:, : n // 2 + 1] / n)
    y = rng.standard_normal((3, 4))
    _close(F.ihfftn(torch.tensor(y)), _dftn(y, [0, 1], inverse=True)[:, :3] / 12)
    _close(F.hfft2(F.ihfft2(torch.tensor(y)), s=(3, 4)), y)
    _close(F.hfftn(F.ihfftn(torch.tensor(y)), s=(3, 4)), y)


# -- frequencies and shifts ------------------------------------------------------------------


def test_fftfreq_and_rfftfreq() -> None:
    _close(F.fftfreq(5, 0.1), np.array([0, 1, 2, -2, -1]) / 0.5, 1e-6)
    _close(F.fftfreq(4), np.array([0, 1, -2, -1]) / 4, 1e-7)
    _close(F.rfftfreq(5, 2.0), np.array([0, 1, 2]) / 10, 1e-7)
    assert F.fftfreq(4, dtype=torch.float64).dtype == torch.float64
    assert F.fftfreq(3, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="fftfreq requires a floating point or complex"):
        F.fftfreq(4, dtype=torch.int64)


def test_fftshift_and_ifftshift_roll_the_zero_frequency() -> None:
    x = torch.arange(10).reshape(2, 5)
    assert F.fftshift(torch.arange(5)).tolist() == [3, 4, 0, 1, 2]
    assert F.ifftshift(torch.arange(5)).tolist() == [2, 3, 4, 0, 1]
    assert F.fftshift(x).tolist() == [[8, 9, 5, 6, 7], [3, 4, 0, 1, 2]]
    assert F.fftshift(x, dim=1).tolist() == [[3, 4, 0, 1, 2], [8, 9, 5, 6, 7]]
    assert F.ifftshift(F.fftshift(x)).tolist() == x.tolist()


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.fft(torch.randn(4).half()), RuntimeError, "Unsupported dtype Half"),
    (lambda: F.fft(torch.randn(4), n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda: F.irfft(torch.randn(1, dtype=torch.complex64)), RuntimeError,
     r"Invalid number of data points \(0\)"),
    (lambda: F.fft(torch.randn(4), dim=2), IndexError, "Dimension out of range"),
    (lambda: F.fft(torch.tensor(1.0)), IndexError, "tensor has no dimensions"),
    (lambda: F.fft(torch.randn(4), norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (lambda: F.rfft(torch.randn(4, dtype=torch.complex64)), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda: F.ihfft(torch.randn(4, dtype=torch.complex64)), RuntimeError,
     "ihfft expects a real input tensor"),
    (lambda: F.fftn(torch.randn(4, 4), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda: F.fftn(torch.randn(4, 4), s=(4,), dim=(0, 1)), RuntimeError,
     "dim and shape arguments must have the same length"),
    (lambda: F.fftn(torch.randn(4), s=(2, 2)), RuntimeError,
     "Got shape with 2 values but input tensor only has 1 dimensions"),
    (lambda: F.fft2(torch.randn(4)), IndexError, "Dimension out of range"),
])
def test_errors_are_pytorchs(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


# -- operators, meta, laziness ---------------------------------------------------------------


def test_transforms_are_aten_operators_a_dispatch_mode_sees() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(8)
    with Record():
        F.rfft(x)
        F.ifft(x.to(torch.complex64))
        F.irfft(torch.randn(5, dtype=torch.complex64))
    assert any("_fft_r2c" in s for s in seen), seen
    assert any("_fft_c2c" in s for s in seen), seen
    assert any("_fft_c2r" in s for s in seen), seen


def test_meta_tensors_get_shapes_and_dtypes() -> None:
    x = torch.empty(3, 10, device="meta")
    assert F.rfft(x).shape == (3, 6) and F.rfft(x).dtype == torch.complex64
    assert F.irfft(F.rfft(x), n=10).shape == (3, 10)
    assert F.fftn(x, s=(4, 7)).shape == (4, 7)
    spec = torch.stft(x, 8, window=torch.hann_window(8, device="meta"), return_complex=True)
    assert spec.shape == (3, 5, 6) and spec.device.type == "meta"  # (10 + 8 - 8) // 2 + 1


def test_import_torch_does_not_import_numpy_fft() -> None:
    # a length of 7 is left to core's reference kernel (the CPU backend's native FFT takes
    # lengths of 2, 3 and 5 only): the reference imports numpy.fft on its first transform
    code = ("import sys, torch; torch.zeros(3) + 1; assert 'numpy.fft' not in sys.modules; "
            "torch.fft.fft(torch.zeros(7)); assert 'numpy.fft' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- gradients -------------------------------------------------------------------------------

_REAL = (3, 6)
_ODD = (3, 5)
_COMPLEX = (3, 6, 2)

GRADIENT_CASES = {
    "fft": (lambda z: F.fft(z), _COMPLEX),
    "ifft n=8 ortho": (lambda z: F.ifft(z, n=8, norm="ortho"), _COMPLEX),
    "fft of real, trimmed": (lambda x: F.fft(x, n=4), _REAL),
    "fftn forward": (lambda z: F.fftn(z, norm="forward"), _COMPLEX),
    "rfft": (lambda x: F.rfft(x), _REAL),
    "rfft odd": (lambda x: F.rfft(x), _ODD),
    "rfft2 ortho": (lambda x: F.rfft2(x, norm="ortho"), _REAL),
    "irfft": (lambda z: F.irfft(z), _COMPLEX),
    "irfft odd n": (lambda z: F.irfft(z, n=9), _COMPLEX),
    "irfft short n": (lambda z: F.irfft(z, n=4), _COMPLEX),
    "irfftn": (lambda z: F.irfftn(z, s=(3, 7)), _COMPLEX),
    "hfft": (lambda z: F.hfft(z), _COMPLEX),
    "ihfft": (lambda x: F.ihfft(x), _REAL),
    "hfft2": (lambda z: F.hfft2(z), _COMPLEX),
    "ihfftn": (lambda x: F.ihfftn(x), _ODD),
    "abs of rfft": (lambda x: F.rfft(x).abs(), _REAL),
    "angle of fft": (lambda z: F.fft(z).angle(), _COMPLEX),
    "real and imag of fft": (lambda x: F.fft(x).real * F.fft(x).imag, _REAL),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_and_second_derivatives(name: str) -> None:
    fn, shape = GRADIENT_CASES[name]
    x = torch.tensor(_rng().standard_normal(shape), dtype=torch.float64, requires_grad=True)
    wrapped = _realified(fn, len(shape) == 3)
    assert gradcheck(wrapped, (x,))
    assert gradgradcheck(wrapped, (x,))


def test_gradient_of_a_real_signal_is_real_and_silent() -> None:
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.fft(x).abs().sum().backward()
    assert x.grad.dtype == torch.float64


def test_complex_abs_is_real_as_in_pytorch() -> None:
    z = torch.tensor([3 + 4j, -1 + 0j, -2j])
    assert z.abs().dtype == torch.float32
    assert z.abs().tolist() == [5.0, 1.0, 2.0]
    assert torch.tensor([1 + 1j], dtype=torch.complex128).abs().dtype == torch.float64
    _close(z.angle(), np.angle(_values(z)), 1e-6)


# -- windows ---------------------------------------------------------------------------------


def _symmetric(name: str, n: int) -> np.ndarray:
    k = np.arange(n)
    phase = 2 * np.pi * k / (n - 1)
    return {
        "hann_window": 0.5 - 0.5 * np.cos(phase),
        "hamming_window": 0.54 - 0.46 * np.cos(phase),
        "blackman_window": 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase),
        "bartlett_window": 1 - np.abs(2 * k / (n - 1) - 1),
        "kaiser_window": np.i0(12.0 * np.sqrt(1 - (2 * k / (n - 1) - 1) ** 2)) / np.i0(12.0),
    }[name]


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_symmetric_and_periodic(name: str) -> None:
    fn = getattr(torch, name)
    _close(fn(9, False, dtype=torch.float64), _symmetric(name, 9))
    _close(fn(8, dtype=torch.float64), _symmetric(name, 9)[:8])  # periodic by default
    assert fn(6).dtype == torch.float32
    assert fn(0).shape == (0,)
    assert fn(1).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="requires non-negative window_length"):
        fn(-1)
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        fn(4, dtype=torch.int64)


def test_window_parameters() -> None:
    k = np.arange(7)
    _close(torch.hamming_window(7, False, 0.6, 0.3, dtype=torch.float64),
           0.6 - 0.3 * np.cos(2 * np.pi * k / 6))
    _close(torch.kaiser_window(7, False, 5.0, dtype=torch.float64),
           np.i0(5.0 * np.sqrt(1 - (k / 3 - 1) ** 2)) / np.i0(5.0))
    assert torch.hann_window(4, requires_grad=True).requires_grad


# -- stft / istft ----------------------------------------------------------------------------


def _frames_stft(x: np.ndarray, n_fft: int, hop: int, window: np.ndarray) -> np.ndarray:
    """(freq, frames): each frame of n_fft samples times the window, transformed."""
    count = 1 + (len(x) - n_fft) // hop
    frames = np.stack([x[t * hop: t * hop + n_fft] * window for t in range(count)], 1)
    return _dft(frames, 0)


def test_stft_is_the_transform_of_windowed_frames() -> None:
    x = _rng().standard_normal(40)
    window = _symmetric("hann_window", 17)[:16]
    # center=True pads n_fft // 2 samples reflected at both ends
    padded = np.pad(x, 8, mode="reflect")
    expected = _frames_stft(padded, 16, 4, window)[:9]
    spec = torch.stft(torch.tensor(x), 16, hop_length=4, window=torch.hann_window(16,
                      dtype=torch.float64), return_complex=True)
    _close(spec, expected)
    # a batch, no centring, a shorter window padded to n_fft, normalized, both sides
    batch = _rng().standard_normal((2, 30))
    short = np.concatenate([np.zeros(2), _symmetric("hamming_window", 9)[:8], np.zeros(2)])
    got = torch.stft(torch.tensor(batch), 12, hop_length=3, win_length=8,
                     window=torch.hamming_window(8, dtype=torch.float64), center=False,
                     normalized=True, onesided=False, return_complex=True)
    for b in range(2):
        _close(got[b], _frames_stft(batch[b], 12, 3, short) / math.sqrt(12))


@pytest.mark.parametrize("mode", ["constant", "replicate", "circular"])
def test_stft_pad_modes(mode: str) -> None:
    x = _rng().standard_normal(20)
    numpy_mode = {"constant": "constant", "replicate": "edge", "circular": "wrap"}[mode]
    expected = _frames_stft(np.pad(x, 4, mode=numpy_mode), 8, 2, np.ones(8))[:5]
    got = torch.stft(torch.tensor(x), 8, hop_length=2, window=torch.ones(8, dtype=torch.float64),
                     pad_mode=mode, return_complex=True)
    _close(got, expected)


def test_stft_return_complex_rules() -> None:
    x = torch.randn(32)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        torch.stft(x, 8, window=torch.hann_window(8))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        legacy = torch.stft(x, 8, window=torch.hann_window(8), return_complex=False)
    spec = torch.stft(x, 8, window=torch.hann_window(8), return_complex=True)
    assert legacy.shape == (5, 17, 2)  # hop_length n_fft // 4: 1 + (32 + 8 - 8) // 2 frames
    _close(legacy, _values(torch.view_as_real(spec)), 1e-6)
    # a complex input is complex without asking, and cannot be onesided
    z = torch.randn(32, dtype=torch.complex64)
    assert torch.stft(z, 8, window=torch.hann_window(8)).shape == (8, 17)
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        torch.stft(z, 8, window=torch.hann_window(8), onesided=True)


@pytest.mark.parametrize("call, message", [
    (lambda: torch.stft(torch.randn(2, 2, 8), 4, return_complex=True), "expected a 1D or 2D"),
    (lambda: torch.stft(torch.randn(8), 20, center=False, return_complex=True),
     "expected 0 < n_fft < 8, but got n_fft=20"),
    (lambda: torch.stft(torch.randn(8), 4, hop_length=0, return_complex=True),
     "expected hop_length > 0"),
    (lambda: torch.stft(torch.randn(8), 4, win_length=5, return_complex=True),
     "expected 0 < win_length <= n_fft"),
    (lambda: torch.stft(torch.randn(8), 4, window=torch.ones(3), return_complex=True),
     "expected a 1D window tensor of size equal to win_length=4"),
    (lambda: torch.stft(torch.arange(8), 4, return_complex=True),
     "expected a tensor of floating point or complex values"),
    (lambda: torch.stft(torch.randn(3), 8, return_complex=True),
     "Padding size should be less than the corresponding input dimension"),
    (lambda: torch.istft(torch.randn(5, 3), 8), "istft requires a complex-valued input"),
    (lambda: torch.istft(torch.randn(4, 3, dtype=torch.complex64), 8),
     "to match n_fft / 2 \\+ 1 when onesided=True"),
    (lambda: torch.istft(torch.stft(torch.randn(8), 4, hop_length=4, window=torch.hann_window(4),
                                    center=False, return_complex=True),
                         4, hop_length=4, window=torch.hann_window(4), center=False),
     "window overlap add min"),
])
def test_stft_and_istft_errors(call, message) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-window warnings
        with pytest.raises(RuntimeError, match=message):
            call()


def test_stft_unknown_pad_mode() -> None:
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        torch.stft(torch.randn(16), 4, pad_mode="foo", return_complex=True)


@pytest.mark.parametrize("n_fft, hop, win, center, window", [
    (16, 4, 16, True, "hann_window"), (15, 5, 9, True, "hann_window"),
    # without centring, the first and last samples lie under one window: it must not be zero
    (12, 3, 12, False, "hamming_window")])
def test_istft_inverts_stft(n_fft: int, hop: int, win: int, center: bool, window: str) -> None:
    x = torch.randn(2, 60, dtype=torch.float64)
    w = getattr(torch, window)(win, dtype=torch.float64)
    spec = x.stft(n_fft, hop_length=hop, win_length=win, window=w, center=center,
                  return_complex=True)
    back = spec.istft(n_fft, hop_length=hop, win_length=win, window=w, center=center)
    _close(back, _values(x)[:, : back.shape[1]])
    assert back.shape[1] >= 60 - hop


def test_istft_length_and_one_dim_input() -> None:
    x = torch.randn(50, dtype=torch.float64)
    window = torch.hann_window(16, dtype=torch.float64)
    spec = torch.stft(x, 16, hop_length=4, window=window, return_complex=True)
    _close(torch.istft(spec, 16, hop_length=4, window=window), _values(x)[:48])
    with pytest.warns(UserWarning, match="padded with zeros in the tail"):
        longer = torch.istft(spec, 16, hop_length=4, window=window, length=60)
    assert longer.shape == (60,)
    _close(longer[:50], _values(x))
    # the frames cover 16 + 4 * 12 samples, 8 of them padding at each end: zeros after 56
    assert longer[56:].abs().max().item() == 0.0


def test_istft_return_complex_round_trips_a_complex_signal() -> None:
    z = torch.randn(40, dtype=torch.complex128)
    window = torch.hann_window(8, dtype=torch.float64)
    spec = torch.stft(z, 8, hop_length=2, window=window)
    back = torch.istft(spec, 8, hop_length=2, window=window, return_complex=True, length=40)
    _close(back, _values(z))


def test_stft_and_istft_gradients() -> None:
    x = torch.randn(2, 20, dtype=torch.float64, requires_grad=True)
    window = torch.hann_window(8, dtype=torch.float64, requires_grad=True)

    def spectrogram(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.stft(x, 8, hop_length=2, window=w, return_complex=True))

    assert gradcheck(spectrogram, (x, window))
    assert gradgradcheck(spectrogram, (x, window))
    spec = torch.randn(2, 5, 11, 2, dtype=torch.float64, requires_grad=True)
    fixed = window.detach()
    assert gradcheck(lambda s: torch.istft(torch.view_as_complex(s), 8, hop_length=2,
                                           window=fixed), (spec,))


def test_a_device_without_spectral_kernels_falls_back_to_the_cpu() -> None:
    # the toy test plugin implements few primitives: the transforms run through the CPU
    # fallback and stay on its device, gradients included
    x = torch.randn(2, 16, dtype=torch.float64)
    on_toy = x.to("toy").requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's one-time warnings
        spectrum = F.rfft(on_toy)
        spectrum.abs().sum().backward()
        spec = torch.stft(on_toy.detach(), 8, window=torch.hann_window(8, device="toy"),
                          return_complex=True)
    assert spectrum.device.type == "toy" and on_toy.grad.device.type == "toy"
    _close(spectrum.cpu(), _dft(_values(x), 1)[:, :9])
    cpu = x.clone().requires_grad_()
    F.rfft(cpu).abs().sum().backward()
    _close(on_toy.grad.cpu(), _values(cpu.grad))
    assert spec.device.type == "toy" and spec.shape == (2, 5, 9)


# -- torch.signal.windows --------------------------------------------------------------------


def test_signal_windows_symmetric_and_periodic() -> None:
    W = torch.signal.windows
    k = np.arange(7)
    expected = {
        "hann": 0.5 - 0.5 * np.cos(2 * np.pi * k / 6),
        "hamming": 0.54 - 0.46 * np.cos(2 * np.pi * k / 6),
        "blackman": _symmetric("blackman_window", 7),
        "bartlett": _symmetric("bartlett_window", 7),
        "kaiser": _symmetric("kaiser_window", 7),
        "cosine": np.sin(np.pi * (k + 0.5) / 7),
        "exponential": np.exp(-np.abs(k - 3)),
        "gaussian": np.exp(-((k - 3) / 2.0) ** 2 / 2),
        "nuttall": sum((-1) ** j * c * np.cos(2 * np.pi * j * k / 6) for j, c in
                       enumerate((0.3635819, 0.4891775, 0.1365995, 0.0106411))),
    }
    for name, values in expected.items():
        kwargs = {"std": 2.0} if name == "gaussian" else {}
        _close(getattr(W, name)(7, dtype=torch.float64, **kwargs), values)
        # periodic: the symmetric window one longer, without its last point
        longer = getattr(W, name)(7, dtype=torch.float64, **kwargs)
        _close(getattr(W, name)(6, sym=False, dtype=torch.float64, **kwargs), _values(longer)[:6])
    _close(W.general_cosine(5, a=[0.5, 0.5], dtype=torch.float64), _symmetric("hann_window", 5))
    assert W.hann(4).dtype == torch.float32 and W.hann(0).shape == (0,)
    assert W.hann(1).tolist() == [1.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: torch.signal.windows.hann(-1), ValueError, "requires non-negative window length"),
    (lambda: torch.signal.windows.hann(4, dtype=torch.int64), ValueError,
     "expects float32 or float64 dtypes"),
    (lambda: torch.signal.windows.gaussian(4, std=0), ValueError, "Standard deviation"),
    (lambda: torch.signal.windows.exponential(4, center=1.0), ValueError,
     "Center must be None for symmetric windows"),
    (lambda: torch.signal.windows.general_cosine(4, a=1.0), TypeError, "must be a list/tuple"),
])
def test_signal_windows_errors(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()
