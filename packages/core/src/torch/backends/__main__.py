"""``python -m torch.backends``: what is installed, loaded and failed, and how long it took."""

from __future__ import annotations

import sys


def report() -> str:
    import torch
    from torch._core import registry as _registry

    info = _registry.summary()
    lines = [
        f"plait-core {torch.version.PLAIT}, torch {torch.__version__} (import package torch at "
        f"{torch.__file__})",
        f"import torch: {torch._import_seconds * 1e3:.1f} ms in the facade, of which autoload "
        f"{info['autoload_seconds'] * 1e3:.1f} ms",
        f"{_registry.ENV_VAR}={info['autoload']!r}",
        f"deterministic algorithms: {torch.are_deterministic_algorithms_enabled()} "
        f"(debug mode {torch.get_deterministic_debug_mode()}, warn only "
        f"{torch.is_deterministic_algorithms_warn_only_enabled()})",
        f"default device: {torch.get_default_device().type}; default dtype: "
        f"{torch.get_default_dtype()}",
        "",
        "backend plugins (entry-point group 'torch.backends'):",
    ]
    plugins = info["plugins"]
    if not plugins:
        lines.append("  none installed")
    for name, p in sorted(plugins.items()):
        version = p.info.version if p.info is not None else p.version
        lines.append(f"  {name:<10} {p.status:<8} {p.distribution} {version}  "
                     f"load {p.load_seconds * 1e3:.2f} ms  -> {p.value}")
        if p.error is not None:
            lines.append(f"             error: {type(p.error).__name__}: {p.error}")
    counts = {s: sum(1 for p in plugins.values() if p.status == s)
              for s in ("loaded", "failed", "skipped")}
    lines.append(f"installed {len(plugins)}, loaded {counts['loaded']}, failed "
                 f"{counts['failed']}, skipped {counts['skipped']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
