"""Op database rows: ``torch.fft``, the window functions, ``torch.stft`` and ``torch.istft``.

A row's dtype names the real precision; transforms of complex signals (``ifft``, ``irfft``,
``hfft``...) make their complex input from two real arrays of that precision. Results are
complex for most transforms: the parity run compares them as complex values, and their
gradients through their real and imaginary parts.
"""

from __future__ import annotations

from . import OpInfo, SampleInput

REAL = ("float32", "float64")
_COMPLEX = {"float32": "complex64", "float64": "complex128"}


def _real(make, shape, dtype, noncontiguous=False):
    return make(shape, dtype, -2.0, 2.0, noncontiguous)


def _complex(make, shape, dtype):
    """A complex tensor of ``dtype``'s precision from two real arrays."""
    torch = make.torch
    parts = [make.array(shape, dtype, -2.0, 2.0) for _ in range(2)]
    values = (parts[0] + 1j * parts[1]).tolist()
    return torch.tensor(values, dtype=getattr(torch, _COMPLEX[dtype]))


def _c2c_samples(torch, dtype, make):
    yield SampleInput(_complex(make, (8,), dtype), name="1-d")
    yield SampleInput(_complex(make, (3, 5), dtype), kwargs={"n": 7, "norm": "ortho"},
                      name="zero-padded, ortho")
    yield SampleInput(_complex(make, (6, 4), dtype), kwargs={"n": 3, "dim": 0,
                                                             "norm": "forward"},
                      name="trimmed dim 0, forward")
    yield SampleInput(_real(make, (2, 6), dtype, True), name="real strided input")


def _c2c_nd_samples(torch, dtype, make):
    yield SampleInput(_complex(make, (3, 4, 5), dtype), name="every dim")
    yield SampleInput(_complex(make, (3, 4, 5), dtype), kwargs={"dim": (2, 0)},
                      name="dims 2 and 0")
    yield SampleInput(_complex(make, (3, 4), dtype), kwargs={"s": (5, 3), "norm": "ortho"},
                      name="s padded and trimmed, ortho")
    yield SampleInput(_real(make, (4, 4), dtype), kwargs={"norm": "forward"},
                      name="real input, forward")


def _c2c_2d_samples(torch, dtype, make):
    yield SampleInput(_complex(make, (2, 3, 4), dtype), name="last two dims")
    yield SampleInput(_complex(make, (3, 4), dtype), kwargs={"s": (4, 6), "dim": (0, 1)},
                      name="s")


def _r2c_samples(torch, dtype, make):
    yield SampleInput(_real(make, (8,), dtype), name="even length")
    yield SampleInput(_real(make, (3, 7), dtype), kwargs={"norm": "ortho"}, name="odd, ortho")
    yield SampleInput(_real(make, (5, 4), dtype), kwargs={"n": 6, "dim": 0, "norm": "forward"},
                      name="zero-padded dim 0, forward")
    yield SampleInput(_real(make, (2, 6), dtype, True), name="strided")


def _r2c_nd_samples(torch, dtype, make):
    yield SampleInput(_real(make, (3, 4, 6), dtype), name="every dim")
    yield SampleInput(_real(make, (3, 4, 5), dtype), kwargs={"dim": (0, 2), "norm": "ortho"},
                      name="dims 0 and 2, ortho")
    yield SampleInput(_real(make, (3, 4), dtype), kwargs={"s": (4, 5)}, name="s")


def _c2r_samples(torch, dtype, make):
    yield SampleInput(_complex(make, (5,), dtype), name="default length")
    yield SampleInput(_complex(make, (3, 4), dtype), kwargs={"n": 7, "norm": "ortho"},
                      name="odd length, ortho")
    yield SampleInput(_complex(make, (6, 2), dtype), kwargs={"n": 4, "dim": 0,
                                                             "norm": "forward"},
                      name="shorter n, dim 0, forward")


def _c2r_nd_samples(torch, dtype, make):
    yield SampleInput(_complex(make, (3, 4), dtype), name="default sizes")
    yield SampleInput(_complex(make, (2, 3, 4), dtype), kwargs={"s": (3, 5), "norm": "ortho"},
                      name="s odd last, ortho")


def _freq_samples(torch, dtype, make):
    yield SampleInput(5, kwargs={"dtype": getattr(torch, dtype)}, name="odd n")
    yield SampleInput(8, (0.25,), kwargs={"dtype": getattr(torch, dtype)}, name="even n, d")


def _shift_samples(torch, dtype, make):
    yield SampleInput(_real(make, (5,), dtype), name="odd")
    yield SampleInput(_real(make, (4, 6), dtype), name="every dim")
    yield SampleInput(_real(make, (3, 5), dtype), kwargs={"dim": 1}, name="one dim")
    yield SampleInput(_real(make, (3, 4, 5), dtype), kwargs={"dim": (0, 2)}, name="two dims")


def _window_samples(*extra):
    def samples(torch, dtype, make):
        dt = getattr(torch, dtype)
        for length in (0, 1, 6, 7):
            yield SampleInput(length, kwargs={"dtype": dt}, name=f"length {length}")
        yield SampleInput(6, (False, *extra), kwargs={"dtype": dt}, name="symmetric")

    return samples


def _stft_samples(torch, dtype, make):
    dt = getattr(torch, dtype)
    yield SampleInput(_real(make, (40,), dtype), (16,),
                      {"hop_length": 4, "window": torch.hann_window(16, dtype=dt),
                       "return_complex": True}, name="hann, centred")
    yield SampleInput(_real(make, (2, 30), dtype), (12,),
                      {"hop_length": 3, "win_length": 8,
                       "window": torch.hamming_window(8, dtype=dt), "center": False,
                       "normalized": True, "return_complex": True},
                      name="batch, short window, normalized")
    yield SampleInput(_real(make, (24,), dtype), (8,),
                      {"window": torch.hann_window(8, dtype=dt), "pad_mode": "constant",
                       "onesided": False, "return_complex": True},
                      name="two-sided, constant padding")
    yield SampleInput(_complex(make, (20,), dtype), (8,),
                      {"hop_length": 2, "window": torch.hann_window(8, dtype=dt)},
                      name="complex signal")


def _istft_samples(torch, dtype, make):
    dt = getattr(torch, dtype)
    yield SampleInput(_complex(make, (9, 11), dtype), (16,),
                      {"hop_length": 4, "window": torch.hann_window(16, dtype=dt)},
                      name="hann, centred")
    yield SampleInput(_complex(make, (2, 5, 9), dtype), (8,),
                      {"hop_length": 2, "window": torch.hann_window(8, dtype=dt),
                       "length": 20}, name="batch, length")
    yield SampleInput(_complex(make, (7, 6), dtype), (12,),
                      {"hop_length": 3, "window": torch.hamming_window(12, dtype=dt),
                       "center": False}, name="not centred")


def _fft(name, samples):
    return OpInfo(f"fft.{name}", samples, dtypes=REAL, supports_out=True, differentiable=True,
                  atol=1e-5, rtol=1e-5)


OPS = [
    _fft("fft", _c2c_samples), _fft("ifft", _c2c_samples),
    _fft("fft2", _c2c_2d_samples), _fft("ifft2", _c2c_2d_samples),
    _fft("fftn", _c2c_nd_samples), _fft("ifftn", _c2c_nd_samples),
    _fft("rfft", _r2c_samples), _fft("ihfft", _r2c_samples),
    _fft("rfft2", _r2c_nd_samples), _fft("ihfft2", _r2c_nd_samples),
    _fft("rfftn", _r2c_nd_samples), _fft("ihfftn", _r2c_nd_samples),
    _fft("irfft", _c2r_samples), _fft("hfft", _c2r_samples),
    _fft("irfft2", _c2r_nd_samples), _fft("hfft2", _c2r_nd_samples),
    _fft("irfftn", _c2r_nd_samples), _fft("hfftn", _c2r_nd_samples),
    OpInfo("fft.fftfreq", _freq_samples, dtypes=REAL, supports_out=True),
    OpInfo("fft.rfftfreq", _freq_samples, dtypes=REAL, supports_out=True),
    OpInfo("fft.fftshift", _shift_samples, dtypes=REAL, differentiable=True),
    OpInfo("fft.ifftshift", _shift_samples, dtypes=REAL, differentiable=True),
    OpInfo("hann_window", _window_samples(), dtypes=REAL),
    OpInfo("hamming_window", _window_samples(0.5, 0.4), dtypes=REAL),
    OpInfo("blackman_window", _window_samples(), dtypes=REAL),
    OpInfo("bartlett_window", _window_samples(), dtypes=REAL),
    OpInfo("kaiser_window", _window_samples(6.0), dtypes=REAL),
    OpInfo("stft", _stft_samples, dtypes=REAL, method="stft", differentiable=True,
           atol=1e-5, rtol=1e-5),
    OpInfo("istft", _istft_samples, dtypes=REAL, method="istft", differentiable=True,
           atol=1e-5, rtol=1e-5),
]
