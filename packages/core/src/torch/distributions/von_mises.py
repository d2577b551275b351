"""``VonMises``: the circular analogue of the normal distribution, on angles in [-pi, pi)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _proposal_r(kappa: torch.Tensor) -> torch.Tensor:
    """The wrapped-Cauchy envelope parameter of Best and Fisher's rejection sampler."""
    tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    r = (1 + rho.pow(2)) / (2 * rho)
    # For tiny kappa the expression cancels catastrophically; its expansion is 1/k + k.
    return torch.where(kappa < 1e-5, 1 / kappa + kappa, r)


class VonMises(Distribution):
    """Density ``exp(concentration cos(x - loc)) / (2 pi I0(concentration))``; samples come
    from Best and Fisher's (1979) rejection sampler and are not reparameterised."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        scalar = isinstance(loc, Number) and isinstance(concentration, Number)
        super().__init__(torch.Size() if scalar else self.loc.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        # log I0(k) = log i0e(k) + k, with the exponentially scaled Bessel function.
        return (kappa * (torch.cos(value - self.loc) - 1) - math.log(2 * math.pi)
                - torch.log(torch.special.i0e(kappa)))

    @lazy_property
    def _proposal(self) -> torch.Tensor:
        return _proposal_r(self.concentration.double())

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            kappa = self.concentration.double().expand(shape)
            r = self._proposal.expand(shape)
            theta = torch.zeros(shape, dtype=torch.float64, device=self.loc.device)
            done = torch.zeros(shape, dtype=torch.bool, device=self.loc.device)
            while not bool(done.all()):
                u = torch.rand((3,) + tuple(shape), dtype=torch.float64,
                               device=self.loc.device)
                z = torch.cos(math.pi * u[0])
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u[1]) > 0) | ((c / u[1]).log() + 1 - c >= 0)
                proposal = torch.sign(u[2] - 0.5) * torch.acos(f.clamp(-1, 1))
                fresh = accept & ~done
                theta = torch.where(fresh, proposal, theta)
                done = done | accept
            angle = theta + self.loc.double()
            return (torch.remainder(angle + math.pi, 2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self) -> torch.Tensor:
        """The circular mean, ``loc``."""
        return self.loc

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> torch.Tensor:  # type: ignore[override]
        """The circular variance ``1 - I1(k) / I0(k)``."""
        kappa = self.concentration
        return 1 - torch.special.i1e(kappa) / torch.special.i0e(kappa)
