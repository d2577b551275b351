"""``LogisticNormal``: a point of the simplex from a Normal vector through stick breaking."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(x)`` for x ~ Normal(``loc``, ``scale``) over the last dim:
    ``K - 1`` normal coordinates give a point of the ``K``-simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist: Any = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> torch.Tensor:
        """The mean of the underlying Normal."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> torch.Tensor:
        """The scale of the underlying Normal."""
        return self.base_dist.base_dist.scale
