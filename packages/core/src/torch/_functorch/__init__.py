"""Function transforms: ``torch.vmap`` and the autodiff transforms of ``torch.func``.

- :mod:`.batched`: the batched tensor (a wrapper holding the physical tensor, batch dim first)
  and the dispatch mode of one ``vmap`` level that serves aten operators on it;
- :mod:`.rules`: the batching rules, a table by operator (elementwise, reductions and
  dim-taking ops, views and shape ops, the matmul family, softmax, cat, indexing, convolution,
  losses), and the loop-and-stack fallback for operators without one;
- :mod:`.vmap`: the public ``vmap`` (in_dims / out_dims over pytrees, randomness, chunks);
- :mod:`.autodiff`: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
  ``hessian`` over the tape autograd.

Core owns these (``torch.vmap`` exists without plait-nn); ``torch.func`` (plait-nn, since
``functional_call`` needs ``torch.nn``) re-exports them.
"""

# plait-compile adds aot_autograd and the partitioners to this package (as plait-nn adds to
# torch): one package directory across distributions, for wheel and editable installs alike.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

