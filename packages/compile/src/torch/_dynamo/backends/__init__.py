"""Compile backends: the table of names ``torch.compile(backend=...)`` accepts."""
