"""The op library: the ``aten::`` operators with their schemas, meta functions and composite
decompositions over primitives, one module per op family. Built on :mod:`torch._core` only."""
