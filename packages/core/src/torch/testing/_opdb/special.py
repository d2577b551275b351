"""Op database rows: ``torch.special`` functions that ``torch.*`` does not already cover.

Samples stay where both libraries are accurate to float tolerance: away from poles; the Bessel
functions of the first and second kind near the origin, and Airy's Ai above -2 (PyTorch 2.13's
own values differ from the exact ones by up to 3e-5 relative at some arguments beyond, e.g.
J_0(-5.5) and Ai(-2.3), checked against high-precision series).
"""

from __future__ import annotations

from . import OpInfo, SampleInput

FLOATS_ONLY = ("float32", "float64")
SHAPES = [(), (5,), (3, 4)]


def _unary(low, high):
    def samples(torch, dtype, make):
        for shape in SHAPES:
            yield SampleInput(make(shape, dtype, low, high), name=f"{shape}")
        yield SampleInput(make((3, 4), dtype, low, high, noncontiguous=True),
                          name="noncontiguous")

    return samples


def _binary(low, high, other_low, other_high):
    def samples(torch, dtype, make):
        yield SampleInput(make((3, 4), dtype, low, high),
                          (make((3, 4), dtype, other_low, other_high),), name="same shape")
        yield SampleInput(make((3, 4), dtype, low, high),
                          (make((4,), dtype, other_low, other_high),), name="broadcast")

    return samples


def _polynomial(low, high):
    def samples(torch, dtype, make):
        for n in (0, 1, 4):
            yield SampleInput(make((3, 4), dtype, low, high), (n,), name=f"n={n}")

    return samples


def _polygamma(torch, dtype, make):
    for n in (1, 2):
        yield SampleInput(n, (make((3, 4), dtype, 0.5, 5.0),), name=f"n={n}")


# name -> (low, high, differentiable): the function's sample interval
_UNARY = {
    "ndtr": (-5.0, 5.0, True), "log_ndtr": (-8.0, 5.0, True), "ndtri": (0.02, 0.98, True),
    "erfcx": (-2.0, 8.0, True), "entr": (0.1, 5.0, True), "sinc": (-3.0, 3.0, True),
    "i0e": (-10.0, 10.0, True), "i1": (-10.0, 10.0, True), "i1e": (-10.0, 10.0, True),
    "i0": (-10.0, 10.0, True), "modified_bessel_i0": (-10.0, 10.0, False),
    "modified_bessel_i1": (-10.0, 10.0, False), "modified_bessel_k0": (0.1, 10.0, False),
    "modified_bessel_k1": (0.1, 10.0, False), "scaled_modified_bessel_k0": (0.1, 30.0, False),
    "scaled_modified_bessel_k1": (0.1, 30.0, False),
    "spherical_bessel_j0": (-10.0, 10.0, False), "airy_ai": (-2.0, 5.0, False),
    "bessel_j0": (-2.0, 2.0, False), "bessel_j1": (-2.0, 2.0, False),
    "bessel_y0": (0.5, 2.0, False), "bessel_y1": (0.5, 2.0, False),
}
_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                "laguerre_polynomial_l", "legendre_polynomial_p")

OPS = [
    *(OpInfo(f"special.{name}", _unary(low, high), dtypes=FLOATS_ONLY, supports_out=True,
             differentiable=grads) for name, (low, high, grads) in _UNARY.items()),
    OpInfo("special.xlog1py", _binary(-2.0, 2.0, 0.0, 3.0), dtypes=FLOATS_ONLY,
           supports_out=True, differentiable=True),
    OpInfo("special.zeta", _binary(1.5, 5.0, 0.5, 4.0), dtypes=FLOATS_ONLY, supports_out=True),
    OpInfo("special.gammainc", _binary(0.5, 5.0, 0.1, 6.0), dtypes=FLOATS_ONLY,
           supports_out=True),
    OpInfo("special.gammaincc", _binary(0.5, 5.0, 0.1, 6.0), dtypes=FLOATS_ONLY,
           supports_out=True),
    OpInfo("special.polygamma", _polygamma, dtypes=FLOATS_ONLY, supports_out=True),
    *(OpInfo(f"special.{name}", _polynomial(-1.0, 1.0), dtypes=FLOATS_ONLY, supports_out=True)
      for name in _POLYNOMIALS),
]
