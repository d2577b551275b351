"""Fused composites: ops that are composite over primitives (softmax, norms, losses, attention,
Adam, RNN cells) and that a backend may serve with one native kernel instead. Built on
:mod:`torch._core` and the op library."""
