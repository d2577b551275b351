"""The native batched FFT of plait-backend-cpu (kernels/fft.cpp): torch.fft's transforms and
torch.stft against numpy's float64 transforms, over lengths whose factors are 2, 3 and 5 (the
native kernel) and others (core's reference), both precisions, every normalization, strided
and transposed inputs, dims other than the last, several dims, threads; and that the native
kernel really ran, and declines what it does not take without writing anything."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("plait_backend_cpu._C")

from plait_backend_cpu import _C as C

import torch

NATIVE_LENGTHS = [1, 2, 3, 4, 5, 6, 8, 9, 12, 15, 16, 25, 30, 60, 64, 100, 120, 128, 250, 256,
                  360, 512, 1000, 1024]
OTHER_LENGTHS = [7, 14, 22, 49]
NORMS = [None, "ortho", "forward"]
# relative error bound per log2(n) of float32 / float64 transforms
TOL = {torch.float32: 2e-6, torch.float64: 1e-14}
COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.complex128 if t.is_complex() else np.float64)


def _close(got: torch.Tensor, want: np.ndarray, dtype: torch.dtype, n: int) -> None:
    assert tuple(got.shape) == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    err = float(np.abs(_np(got) - want).max(initial=0.0)) / scale
    assert err <= TOL[dtype] * max(1.0, np.log2(max(n, 2))) * 4, err


@pytest.fixture
def native_calls(monkeypatch):
    """Counts the calls that reached the native kernel."""
    calls = []
    real = C.fft

    def counting(*args):
        calls.append(args[3])
        return real(*args)

    monkeypatch.setattr(C, "fft", counting)
    return calls


def _signal(shape, dtype, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if complex_:
        values = values + 1j * rng.standard_normal(shape)
        return torch.tensor(values, dtype=COMPLEX[dtype])
    return torch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", NATIVE_LENGTHS)
def test_one_dimensional_transforms_match_numpy(n, dtype, native_calls):
    x = _signal((3, n), dtype, seed=n)
    z = _signal((3, n), dtype, seed=n + 1, complex_=True)
    xn, zn = _np(x), _np(z)
    for norm in NORMS:
        _close(torch.fft.rfft(x, norm=norm), np.fft.rfft(xn, norm=norm), dtype, n)
        _close(torch.fft.fft(x, norm=norm), np.fft.fft(xn, norm=norm), dtype, n)
        _close(torch.fft.fft(z, norm=norm), np.fft.fft(zn, norm=norm), dtype, n)
        _close(torch.fft.ifft(z, norm=norm), np.fft.ifft(zn, norm=norm), dtype, n)
        half = torch.fft.rfft(x)
        _close(torch.fft.irfft(half, n=n, norm=norm), np.fft.irfft(_np(half), n=n, norm=norm),
               dtype, n)
    assert native_calls and set(native_calls) == {n}


@pytest.mark.parametrize("n", OTHER_LENGTHS)
def test_other_lengths_take_the_reference(n, native_calls):
    x = _signal((2, n), torch.float64, seed=n)
    _close(torch.fft.rfft(x), np.fft.rfft(_np(x)), torch.float64, n)
    _close(torch.fft.fft(x.to(torch.complex128)), np.fft.fft(_np(x)), torch.float64, n)
    assert native_calls == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_strided_inputs_other_dims_and_batches(dtype, native_calls):
    x = _signal((5, 4, 96), dtype, seed=3)
    # a stepped slice, a transposed view, a middle dim, a batch of many groups
    cases = [(x[:, :, ::2], -1), (x.transpose(0, 2), 0), (x, 1), (x.reshape(-1, 12), -1)]
    for t, dim in cases:
        n = t.shape[dim]
        _close(torch.fft.rfft(t, dim=dim), np.fft.rfft(_np(t), axis=dim), dtype, n)
        z = t.to(COMPLEX[dtype])
        _close(torch.fft.fft(z, dim=dim), np.fft.fft(_np(z), axis=dim), dtype, n)
    big = _signal((333, 40), dtype, seed=4)  # 333 signals: a partial last group of lanes
    _close(torch.fft.rfft(big), np.fft.rfft(_np(big)), dtype, 40)
    assert len(native_calls) == 2 * len(cases) + 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_several_dims(dtype, native_calls):
    x = _signal((4, 6, 10), dtype, seed=5)
    z = _signal((4, 6, 10), dtype, seed=6, complex_=True)
    xn, zn = _np(x), _np(z)
    for norm in NORMS:
        _close(torch.fft.fftn(z, norm=norm), np.fft.fftn(zn, norm=norm), dtype, 240)
        _close(torch.fft.ifft2(z, norm=norm), np.fft.ifft2(zn, norm=norm), dtype, 60)
        _close(torch.fft.rfft2(x, norm=norm), np.fft.rfft2(xn, norm=norm), dtype, 60)
        _close(torch.fft.rfftn(x, norm=norm), np.fft.rfftn(xn, norm=norm), dtype, 240)
        _close(torch.fft.irfft2(z, s=(6, 18), norm=norm),
               np.fft.irfft2(zn, s=(6, 18), norm=norm), dtype, 108)
        _close(torch.fft.irfftn(z, norm=norm), np.fft.irfftn(zn, norm=norm), dtype, 240)
    assert native_calls


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_do_not_depend_on_threads(threads):
    x = _signal((257, 120), torch.float32, seed=7)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = torch.fft.rfft(x)
        torch.set_num_threads(threads)
        many = torch.fft.rfft(x)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, many)


def test_stft_and_istft_match_numpy_framing(native_calls):
    signal = _signal((2, 4000), torch.float32, seed=8)
    window = torch.hann_window(256)
    spec = torch.stft(signal, 256, 64, window=window, return_complex=True)
    # the same frames by numpy: reflect padding, hop 64, Hann window
    padded = np.pad(_np(signal), ((0, 0), (128, 128)), mode="reflect")
    frames = np.stack([padded[:, i * 64:i * 64 + 256] for i in range(spec.shape[-1])], axis=1)
    want = np.fft.rfft(frames * _np(window), axis=-1).transpose(0, 2, 1)
    _close(spec, want, torch.float32, 256)
    back = torch.istft(spec, 256, 64, window=window, length=4000)
    assert float((back - signal).abs().max()) < 1e-4
    assert native_calls


def _native_args(kind, n, x, out, batch):
    return (kind, x.dtype == np.float64 or x.dtype == np.complex128, True, n, n,
            out.shape[-1], 1.0, x.ctypes.data, out.ctypes.data, 1, 1, [batch], [x.shape[-1]],
            [out.shape[-1]])


def test_native_kernel_declines_without_writing():
    x = np.random.default_rng(9).standard_normal((4, 14))
    out = np.full((4, 8), 7.0 + 7.0j)
    # length 14 = 2 * 7: not a 2/3/5 length
    assert C.fft(*_native_args(1, 14, x, out, 4)) != C.FFT_OK
    assert np.all(out == 7.0 + 7.0j)
    # an unknown kind
    assert C.fft(*_native_args(5, 14, x, out, 4)) != C.FFT_OK
    # input and output sharing memory
    buf = np.zeros((4, 16), dtype=np.complex128)
    args = list(_native_args(0, 16, buf, buf, 4))
    assert C.fft(*args) != C.FFT_OK
    # mismatched lengths: c2c must read and write n values
    x16 = np.zeros((2, 16), dtype=np.complex128)
    out15 = np.zeros((2, 15), dtype=np.complex128)
    assert C.fft(*_native_args(0, 16, x16, out15, 2)) != C.FFT_OK
    assert C.fft_length_supported(360) and not C.fft_length_supported(14)


_ROWS_SCRIPT = r"""
import sys
import numpy as np
import torch

rng = np.random.default_rng(3)
results = {}
for n in (20, 24, 30, 250, 512):
    for batch in (16, 17, 40):
        x = torch.from_numpy(rng.standard_normal((batch, n)).astype(np.float32))
        z = torch.from_numpy((rng.standard_normal((batch, n))
                              + 1j * rng.standard_normal((batch, n))).astype(np.complex64))
        results[f"r{n}_{batch}"] = torch.fft.rfft(x).numpy()
        results[f"c{n}_{batch}"] = torch.fft.fft(z, norm="ortho").numpy()
        half = z[:, :n // 2 + 1].contiguous()
        results[f"i{n}_{batch}"] = torch.fft.irfft(half, n=n).numpy()
        results[f"x{n}_{batch}"] = x.numpy()
        results[f"z{n}_{batch}"] = z.numpy()
np.savez(sys.argv[1], **results)
"""


def test_float32_row_transposes_keep_the_bits_of_element_moves(tmp_path):
    """Unit-stride float32 signals move between memory and the lane buffers by 16 x 16
    register transposes on AVX-512 (PLAIT_CPU_VECTOR_BYTES=64), by 8 x 8 ones on AVX2 (32),
    element by element otherwise (16): rfft, fft and irfft, lengths whose half is not a
    multiple of 8 (a remainder moved element-wise), full and partial groups of 16 signals;
    every run gives the same bits and matches numpy in float64. A forced width the CPU lacks
    only narrows: it keeps the element moves (a forced 64 once picked the AVX-512 transposes
    on an AVX2 CPU and died of SIGILL)."""
    import os
    import subprocess
    import sys

    runs = {}
    for width in (16, 32, 64):
        env = {k: v for k, v in os.environ.items() if k != "PLAIT_CPU_VECTOR_BYTES"}
        env["PLAIT_CPU_VECTOR_BYTES"] = str(width)
        target = tmp_path / f"rows_{width}.npz"
        subprocess.run([sys.executable, "-c", _ROWS_SCRIPT, str(target)], env=env, check=True,
                       capture_output=True, text=True)
        with np.load(target) as saved:
            runs[width] = {name: saved[name] for name in saved.files}
    for name, got in runs[64].items():
        assert got.tobytes() == runs[16][name].tobytes(), name
        assert runs[32][name].tobytes() == runs[16][name].tobytes(), name
        if name[0] == "r":
            want = np.fft.rfft(runs[64]["x" + name[1:]].astype(np.float64))
        elif name[0] == "c":
            want = np.fft.fft(runs[64]["z" + name[1:]].astype(np.complex128), norm="ortho")
        elif name[0] == "i":
            n = int(name[1:].split("_")[0])
            half = runs[64]["z" + name[1:]][:, :n // 2 + 1].astype(np.complex128)
            want = np.fft.irfft(half, n=n)
        else:
            continue
        n = int(name[1:].split("_")[0])
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(got - want).max() / scale <= TOL[torch.float32] * np.log2(n) * 4, name
