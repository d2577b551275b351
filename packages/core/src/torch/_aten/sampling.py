"""Operators that sample:

- ``aten::rrelu_with_noise`` (the randomized leaky ReLU, its slopes written into a ``noise``
  tensor in place) with ``aten::rrelu_with_noise_backward``: ``F.rrelu`` reaches it in PyTorch,
  in training and in evaluation;
- ``aten::grid_sampler_2d`` / ``aten::grid_sampler_3d`` (``F.grid_sample`` of a 4-D / 5-D
  input) with their ``*_backward`` operators: bilinear, nearest or (2-d) bicubic taps of the
  input at the normalised (x, y[, z]) points of a grid, under the zeros, border or reflection
  padding rule;
- ``aten::affine_grid_generator`` (``F.affine_grid``) with
  ``aten::affine_grid_generator_backward``: the grid of affine maps over the normalised
  output coordinates.

What a dispatch mode, a flop counter or an exporter keys on. The kernels are composites over
elementwise, random and indexing ops, so every backend serves them (the grid sampler's backward
is the vector-Jacobian product of its forward composite); the derivatives are formulas
(``torch.autograd._formulas.losses``).
"""

from __future__ import annotations

from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype, upcalls
from .._core.tensor import Tensor
from . import creation as _creation, elementwise as _ew, factories as _factories, shape as _shape

__all__: list[str] = []  # F.rrelu is plait-nn's

# below this spread of [lower, upper] PyTorch's backward treats the slope as the constant mean
_SLOPE_SPREAD_FLOOR = 1e-6


def _check_bounds(lower: Any, upper: Any) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_with_noise(self: Tensor, noise: Tensor, lower: Any = 0.125,
                      upper: Any = 1.0 / 3, training: bool = False,
                      generator: Any = None) -> Tensor:
    _check_bounds(lower, upper)
    if not training:  # the leaky ReLU with the mean slope; noise is left alone
        return _ew.where(self > 0, self, self * ((lower + upper) / 2))
    # one draw per element (the random stream plain F.rrelu always used), kept where x <= 0
    draws = _factories.empty_like(self).uniform_(lower, upper, generator=generator)
    slopes = _ew.where(self > 0, 1, draws).to(self.dtype)
    noise.copy_(slopes)  # PyTorch's kernel writes each element's slope into noise
    return self * slopes


def _rrelu_with_noise_backward(grad_output: Tensor, self: Tensor, noise: Tensor, lower: Any,
                               upper: Any, training: bool, self_is_result: bool) -> Tensor:
    if training and upper - lower > _SLOPE_SPREAD_FLOOR:
        return grad_output * noise
    # the leaky ReLU's backward with the mean slope
    return _ew.where(self > 0, grad_output, grad_output * ((lower + upper) / 2))


# -- grid_sampler_2d ---------------------------------------------------------------------------
# PyTorch's enums: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border,
# 2 reflection.

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_INT64 = _dtype.int64
_CUBIC_A = -0.75  # the cubic convolution coefficient PyTorch (and OpenCV) use


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """Normalised [-1, 1] to pixel coordinates: -1 and 1 are the outer pixel edges (centres
    with ``align_corners``)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Fold ``coord`` into [twice_low/2, twice_high/2] by reflecting at the ends."""
    if twice_low == twice_high:
        return _factories.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = (coord - low).abs()
    extra = d.fmod(span)
    flips = (d.detach() / span).floor()
    even = flips.remainder(2) == 0
    return _ew.where(even, extra + low, span - extra + low)


def _pad_coord(x: Tensor, size: int, padding_mode: int, align_corners: bool) -> Tensor:
    """Pixel coordinate ``x`` moved inside the input by the padding rule (zeros leaves it:
    out-of-range taps read 0)."""
    if padding_mode == _BORDER:
        x = x.clamp(0, size - 1)
    elif padding_mode == _REFLECTION:
        x = (_reflect(x, 0, 2 * (size - 1)) if align_corners else
             _reflect(x, -1, 2 * size - 1))
        x = x.clamp(0, size - 1)
    return x


def _cubic_coefficients(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (differentiable in ``t``) of the taps at -1, 0, 1, 2
    for fractions ``t``."""
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _check_grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int,
                        padding_mode: int, n: int) -> None:
    """PyTorch's checks of grid_sampler_{n}d's arguments."""
    if input.dim() != n + 2 or grid.dim() != n + 2 or grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected {n + 2}D input and grid with same number "
                           f"of dimensions, and grid's last dim equal to {n}, but got input "
                           f"with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if interpolation_mode not in (_BILINEAR, _NEAREST, _BICUBIC):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    if interpolation_mode == _BICUBIC and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if padding_mode not in (_ZEROS, _BORDER, _REFLECTION):
        raise RuntimeError(f"grid_sampler(): unknown padding mode {padding_mode}")


def _grid_sample_composite(input: Tensor, grid: Tensor, interpolation_mode: int,
                           padding_mode: int, align_corners: bool) -> Tensor:
    """The sampled (N, C, [D_out,] H_out, W_out) of an (N, C, [D,] H, W) input, in
    differentiable elementwise and gather ops."""
    n = input.dim() - 2
    batch, chans = input.shape[0], input.shape[1]
    sizes = [int(s) for s in input.shape[2:]]
    out_sp = [int(s) for s in grid.shape[1:-1]]
    points = 1
    for size in out_sp:
        points *= size
    volume = 1
    for size in sizes:
        volume *= size
    pts = grid.reshape(batch, points, n)  # -1 is ambiguous when empty
    # grid's last dim lists x (width) first: coordinate k addresses spatial dim n-1-k
    raw = [_unnormalize(pts[..., n - 1 - d], sizes[d], align_corners) for d in range(n)]
    flat = input.reshape(batch, chans, volume)

    def tap(idx: list[Tensor]) -> tuple[Tensor, Tensor]:
        """Values at integer positions ``idx`` (per dim) and whether each is inside."""
        inside: Any = None
        lin: Any = None
        for d in range(n):
            ok = (idx[d] >= 0) & (idx[d] <= sizes[d] - 1)
            inside = ok if inside is None else inside & ok
            c = idx[d].clamp(0, sizes[d] - 1)
            lin = c if lin is None else lin * sizes[d] + c
        gathered = flat.gather(2, lin.unsqueeze(1).expand(batch, chans, lin.shape[1]))
        return gathered, inside

    out: Any = None
    if interpolation_mode == _BICUBIC:
        # 4x4 taps around the unpadded point; the padding rule applies to each tap
        lows = [c.detach().floor() for c in raw]
        weights = [_cubic_coefficients(c - lo) for c, lo in zip(raw, lows)]
        for i in range(4):
            for j in range(4):
                idx = [_pad_coord(lows[d] + (off - 1), sizes[d], padding_mode,
                                  align_corners).round().to(_INT64)
                       for d, off in ((0, i), (1, j))]
                vals, inside = tap(idx)
                w = weights[0][i] * weights[1][j] * inside.to(raw[0].dtype)
                term = vals * w.unsqueeze(1)
                out = term if out is None else out + term
    else:
        coords = [_pad_coord(raw[d], sizes[d], padding_mode, align_corners) for d in range(n)]
        if interpolation_mode == _NEAREST:  # (the grid gets no gradient: a zero one)
            vals, inside = tap([c.detach().round().to(_INT64) for c in coords])
            out = vals * inside.unsqueeze(1).to(vals.dtype)
        else:
            lows = [c.detach().floor() for c in coords]
            fracs = [c - lo for c, lo in zip(coords, lows)]
            for corner in range(2 ** n):
                bits = [(corner >> (n - 1 - d)) & 1 for d in range(n)]
                idx = [(lows[d] + bits[d]).to(_INT64) for d in range(n)]
                w: Any = None
                for d in range(n):
                    wd = fracs[d] if bits[d] else 1 - fracs[d]
                    w = wd if w is None else w * wd
                vals, inside = tap(idx)
                term = vals * (w * inside.to(w.dtype)).unsqueeze(1)
                out = term if out is None else out + term
    return out.reshape(batch, chans, *out_sp)


def _grid_sampler(n: int) -> Any:
    """grid_sampler_{n}d's kernel."""

    def kernel(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
               align_corners: bool) -> Tensor:
        _check_grid_sampler(input, grid, interpolation_mode, padding_mode, n)
        return _grid_sample_composite(input, grid, interpolation_mode, padding_mode,
                                      bool(align_corners))

    return kernel


def _grid_sampler_backward(n: int) -> Any:
    """grid_sampler_{n}d_backward's kernel: the composite's vector-Jacobian product."""

    def kernel(grad_output: Tensor, input: Tensor, grid: Tensor, interpolation_mode: int,
               padding_mode: int, align_corners: bool,
               output_mask: list[bool]) -> tuple[Tensor, Tensor]:
        _check_grid_sampler(input, grid, interpolation_mode, padding_mode, n)
        leaves = (input.detach().requires_grad_(), grid.detach().requires_grad_())
        grads = upcalls.composite_vjp(
            lambda i, g: _grid_sample_composite(i, g, interpolation_mode, padding_mode,
                                                bool(align_corners)), leaves, grad_output)
        # nearest sampling gives the grid a zero gradient, as PyTorch's kernel does
        return (grads[0] if grads[0] is not None else _factories.zeros_like(leaves[0]),
                grads[1] if grads[1] is not None else _factories.zeros_like(leaves[1]))

    return kernel


# -- affine_grid_generator ---------------------------------------------------------------------


def affine_base_grid(spatial: list[int], align_corners: bool, like: Tensor) -> Tensor:
    """(1, prod(spatial), n + 1): each output point's normalised coordinates, x (the last
    spatial dim) first, then a 1 for the translation; ``like``'s dtype and device."""
    n = len(spatial)

    def axis(steps: int) -> Tensor:
        if steps <= 1:
            return _factories.zeros(max(steps, 0), dtype=like.dtype)
        line = _creation.linspace(-1, 1, steps, dtype=like.dtype)
        return line if align_corners else line * ((steps - 1) / steps)

    grids = _shape.meshgrid(*[axis(s) for s in spatial], indexing="ij")
    cols = [grids[n - 1 - k] for k in range(n)] + [_factories.ones(spatial, dtype=like.dtype)]
    return _shape.stack(cols, -1).reshape(1, -1, n + 1).to(like.device)


def _affine_spatial(theta: Tensor, size: list[int]) -> list[int]:
    if len(size) not in (4, 5):
        raise RuntimeError(f"AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, "
                           f"got size {list(size)}")
    return [int(s) for s in size[2:]]


def _affine_grid_generator(theta: Tensor, size: list[int], align_corners: bool) -> Tensor:
    spatial = _affine_spatial(theta, size)
    base = affine_base_grid(spatial, bool(align_corners), theta)
    out = base.expand(theta.shape[0], base.shape[1], base.shape[2]).matmul(
        theta.transpose(1, 2))  # (N, points, n)
    return out.reshape(theta.shape[0], *spatial, len(spatial))


def _affine_grid_generator_backward(grad: Tensor, size: list[int],
                                    align_corners: bool) -> Tensor:
    # out = base theta^T, so d theta = grad^T base (per batch)
    spatial = _affine_spatial(grad, size)
    n = len(spatial)
    base = affine_base_grid(spatial, bool(align_corners), grad)
    rows = grad.reshape(grad.shape[0], -1, n)  # (N, points, n)
    return rows.transpose(1, 2).matmul(base.expand(grad.shape[0], base.shape[1], n + 1))


ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten({
    "rrelu_with_noise": ("rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, "
                         "Scalar upper=0.33333333333333331, bool training=False, "
                         "Generator? generator=None) -> Tensor", _rrelu_with_noise),
    "rrelu_with_noise_backward": ("rrelu_with_noise_backward(Tensor grad_output, Tensor self, "
                                  "Tensor noise, Scalar lower, Scalar upper, bool training, "
                                  "bool self_is_result) -> Tensor", _rrelu_with_noise_backward),
    "grid_sampler_2d": ("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, "
                        "int padding_mode, bool align_corners) -> Tensor", _grid_sampler(2)),
    "grid_sampler_2d_backward": ("grid_sampler_2d_backward(Tensor grad_output, Tensor input, "
                                 "Tensor grid, int interpolation_mode, int padding_mode, "
                                 "bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)",
                                 _grid_sampler_backward(2)),
    "grid_sampler_3d": ("grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, "
                        "int padding_mode, bool align_corners) -> Tensor", _grid_sampler(3)),
    "grid_sampler_3d_backward": ("grid_sampler_3d_backward(Tensor grad_output, Tensor input, "
                                 "Tensor grid, int interpolation_mode, int padding_mode, "
                                 "bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)",
                                 _grid_sampler_backward(3)),
    "affine_grid_generator": ("affine_grid_generator(Tensor theta, SymInt[] size, "
                              "bool align_corners) -> Tensor", _affine_grid_generator),
    "affine_grid_generator_backward": ("affine_grid_generator_backward(Tensor grad, "
                                       "SymInt[] size, bool align_corners) -> Tensor",
                                       _affine_grid_generator_backward),
})
