"""``torch._logging``: ``TORCH_LOGS`` and :func:`set_logs`, through the ``logging`` module.

Each artifact is a logger: ``graph_breaks`` -> ``torch._dynamo.graph_breaks``, ``recompiles``
-> ``torch._dynamo.recompiles``, ``guards`` -> ``torch._dynamo.guards``, ``graph_code`` ->
``torch._dynamo.graph_code``, ``output_code`` -> ``torch._inductor.output_code``; the
components ``dynamo``/``inductor`` are ``torch._dynamo``/``torch._inductor`` at a level. Turning
one on sets its level; the first gives the ``torch`` logger a stderr handler (and stops its
propagation to the root logger), as PyTorch does, so records reach handlers on the way up.
``TORCH_LOGS="graph_breaks,recompiles"`` (or ``+dynamo`` for DEBUG, ``-dynamo`` for ERROR) is
read when ``torch._dynamo`` is imported.
"""

from __future__ import annotations

import logging
import os

__all__ = ["ARTIFACTS", "set_logs"]

# artifact -> (logger, level it logs at)
ARTIFACTS: dict[str, tuple[str, int]] = {
    "graph_breaks": ("torch._dynamo.graph_breaks", logging.DEBUG),
    "recompiles": ("torch._dynamo.recompiles", logging.DEBUG),
    "guards": ("torch._dynamo.guards", logging.DEBUG),
    "graph_code": ("torch._dynamo.graph_code", logging.DEBUG),
    "output_code": ("torch._inductor.output_code", logging.DEBUG),
}
_COMPONENTS = {"dynamo": "torch._dynamo", "inductor": "torch._inductor", "aot": "torch._functorch"}
_handled: set[str] = set()


def _switch(logger_name: str, level: int | None) -> None:
    logger = logging.getLogger(logger_name)
    if level is None:
        logger.setLevel(logging.NOTSET)
        return
    logger.setLevel(level)
    if not _handled:
        # one stderr handler on the "torch" logger, which stops there (as PyTorch's): the
        # artifact loggers propagate to it, so a handler the program adds to
        # "torch._dynamo" (or "torch") sees their records too
        _handled.add("torch")
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        top = logging.getLogger("torch")
        top.addHandler(handler)
        top.propagate = False


def set_logs(**settings: bool | int) -> None:
    """Turn logs on or off: ``set_logs(graph_breaks=True, recompiles=True, dynamo=logging.INFO)``.

    An artifact takes a bool; a component (``dynamo``, ``inductor``, ``aot``) takes a level.

    :raises ValueError: an unknown name.
    """
    for name, value in settings.items():
        if name in ARTIFACTS:
            logger_name, level = ARTIFACTS[name]
            _switch(logger_name, level if value else None)
        elif name in _COMPONENTS:
            _switch(_COMPONENTS[name], int(value) if value else None)
        else:
            raise ValueError(f"Unknown log setting {name!r}; known: "
                             f"{', '.join(sorted({*ARTIFACTS, *_COMPONENTS}))}")


def _from_env(spec: str) -> None:
    """Apply a ``TORCH_LOGS`` value."""
    settings: dict[str, bool | int] = {}
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item[0] in "+-" and item[1:] in _COMPONENTS:
            settings[item[1:]] = logging.DEBUG if item[0] == "+" else logging.ERROR
        elif item in _COMPONENTS:
            settings[item] = logging.INFO
        else:
            settings[item] = True
    set_logs(**settings)


if os.environ.get("TORCH_LOGS"):
    _from_env(os.environ["TORCH_LOGS"])
