"""``torch.utils.benchmark.utils``: the homes of ``Timer`` (``timer``), ``Measurement``
(``common``) and ``Compare`` (``compare``), as in PyTorch."""
