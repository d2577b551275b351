"""``torch.hub``: models published as a ``hubconf.py`` in a GitHub repository or a local
directory.

A repository's ``hubconf.py`` lists the packages it needs (``dependencies``) and defines one
public function per model. ``load(dir, "name", source="local")`` imports it from a directory;
with ``source="github"`` the repository (``"owner/name[:ref]"``) is downloaded once into
:func:`get_dir` and used from there afterwards.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Callable
from types import ModuleType
from typing import Any

# (names PyTorch's module imports, which libraries import from it: timm's urlparse, and the
# type of load's map_location)
from urllib.parse import urlparse  # noqa: F401
from urllib.request import Request, urlopen  # noqa: F401

from torch.serialization import MAP_LOCATION  # noqa: F401

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

# PyTorch's public constants of this module (libraries import them: kornia, torchvision)
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
READ_DATA_CHUNK = 128 * 1024
# the "-<sha256 prefix>." part of a checkpoint's file name ("resnet18-f37072fd.pth")
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")



class _Progress:
    """A text progress bar on stderr, for when the ``tqdm`` package is not installed (the
    subset of its interface downloads use: ``update``, ``close``, a context manager)."""

    def __init__(self, total: int | None = None, disable: bool = False, unit: str | None = None,
                 unit_scale: bool | None = None, unit_divisor: int | None = None,
                 **kwargs: Any) -> None:
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        done = f"{100 * self.n / float(self.total):.1f}%" if self.total else f"{self.n} bytes"
        sys.stderr.write(f"\r{done}")
        sys.stderr.flush()

    def close(self) -> None:
        self.disable = True

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.disable:
            sys.stderr.write("\n")
        self.close()


try:  # the progress bar torch.hub (and torch.utils.model_zoo) offers: tqdm's when installed
    from tqdm import tqdm
except ImportError:
    tqdm = _Progress  # type: ignore[assignment,misc]

_HUBCONF = MODULE_HUBCONF
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir: str | None = None


def _get_torch_home() -> str:
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch`` (``~/.cache/torch``)."""
    return os.path.expanduser(os.environ.get(ENV_TORCH_HOME) or os.path.join(
        os.environ.get(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch"))


def get_dir() -> str:
    """Where downloaded repositories and checkpoints are kept: :func:`set_dir`'s directory,
    else ``$TORCH_HOME/hub`` (``$XDG_CACHE_HOME/torch/hub``, ``~/.cache/torch/hub``)."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    """Keep downloaded repositories and checkpoints in ``d``."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _import_hubconf(repo_dir: str) -> ModuleType:
    """Import ``repo_dir/hubconf.py`` with ``repo_dir`` importable while it runs, and check its
    ``dependencies``."""
    path = os.path.join(repo_dir, _HUBCONF)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [dep for dep in getattr(module, "dependencies", [])
               if importlib.util.find_spec(dep) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(hubconf: ModuleType, model: Any) -> Callable[..., Any]:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    entry = getattr(hubconf, model, None)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


# -- GitHub repositories -------------------------------------------------------------------


def _parse_repo(github: str) -> tuple[str, str, str | None]:
    owner_name, _, ref = github.partition(":")
    if "/" not in owner_name:
        raise ValueError(f'Invalid input: repo_info "{github}" should be of the form '
                         f'"repo_owner/repo_name[:ref]" with an optional ref')
    owner, name = owner_name.split("/", 1)
    return owner, name, ref or None


def _check_trusted(owner: str, name: str, trust_repo: Any, calling_fn: str) -> None:
    """PyTorch's trust check: a repository is run only once the user trusts it (recorded in
    ``trusted_list`` of :func:`get_dir`)."""
    os.makedirs(get_dir(), exist_ok=True)
    trusted_file = os.path.join(get_dir(), "trusted_list")
    trusted = set()
    if os.path.exists(trusted_file):
        with open(trusted_file, encoding="utf-8") as f:
            trusted = {line.strip() for line in f}
    key = f"{owner}_{name}"
    if trust_repo is True or key in trusted or owner in _TRUSTED_OWNERS:
        if key not in trusted and trust_repo is True:
            with open(trusted_file, "a", encoding="utf-8") as f:
                f.write(key + "\n")
        return
    if trust_repo is None:
        warnings.warn(f"You are about to download and run code from an untrusted repository. "
                      f"In a future release, this won't be allowed. To add the repository to "
                      f"your trusted list, change the command to {calling_fn}(..., "
                      f"trust_repo=False) and a command prompt will appear asking for an "
                      f"explicit confirmation of trust, or {calling_fn}(..., trust_repo=True), "
                      f"which will assume that the prompt is to be answered with 'yes'.",
                      stacklevel=4)
        return
    answer = input(f"The repository {key} does not belong to the list of trusted "
                   f"repositories and as such cannot be downloaded. Do you trust this "
                   f"repository and wish to add it to the trusted list of repositories (y/N)?")
    if answer.lower() not in ("y", "yes"):
        raise RuntimeError("Untrusted repository.")
    with open(trusted_file, "a", encoding="utf-8") as f:
        f.write(key + "\n")


def _repo_dir(github: str, force_reload: bool, trust_repo: Any, calling_fn: str,
              verbose: bool = True) -> str:
    """The local copy of a GitHub repository, downloaded unless cached."""
    owner, name, ref = _parse_repo(github)
    hub_dir = get_dir()
    if ref is None:  # the default branch: a cached main or master, else ask GitHub
        cached = [b for b in ("main", "master")
                  if os.path.isdir(os.path.join(hub_dir, f"{owner}_{name}_{b}"))]
        ref = cached[0] if cached else "main"
    repo_dir = os.path.join(hub_dir, f"{owner}_{name}_{ref.replace('/', '_')}")
    _check_trusted(owner, name, trust_repo, calling_fn)
    if os.path.isdir(repo_dir) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    archive = os.path.join(hub_dir, f"{ref.replace('/', '_')}.zip")
    download_url_to_file(f"https://github.com/{owner}/{name}/zipball/{ref}", archive,
                         progress=False)
    with zipfile.ZipFile(archive) as zf:
        top = zf.namelist()[0].split("/", 1)[0]
        zf.extractall(hub_dir)
    os.remove(archive)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(os.path.join(hub_dir, top), repo_dir)
    return repo_dir


# -- public entry points -------------------------------------------------------------------


def list(github: str, force_reload: bool = False, skip_validation: bool = False,
         trust_repo: Any = "check", verbose: bool = True) -> list[str]:  # type: ignore[valid-type]
    """The model names a GitHub repository's ``hubconf.py`` publishes."""
    hubconf = _import_hubconf(_repo_dir(github, force_reload, trust_repo, "list", verbose))
    return [name for name in dir(hubconf)
            if callable(getattr(hubconf, name)) and not name.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,
         skip_validation: bool = False, trust_repo: Any = "check") -> str | None:
    """The docstring of a model of a GitHub repository's ``hubconf.py``."""
    hubconf = _import_hubconf(_repo_dir(github, force_reload, trust_repo, "help", True))
    return _entry(hubconf, model).__doc__


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = "check", force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:
    """Call ``model(*args, **kwargs)`` from the ``hubconf.py`` of a GitHub repository
    (``source="github"``, ``"owner/name[:ref]"``) or of a local directory
    (``source="local"``)."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    repo_dir = repo_or_dir
    if source == "github":
        repo_dir = _repo_dir(repo_or_dir, force_reload, trust_repo, "load", verbose)
    return _entry(_import_hubconf(repo_dir), model)(*args, **kwargs)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to ``dst`` (through a temporary file beside it, so that ``dst`` never
    holds a partial download); with ``hash_prefix``, its SHA-256 must start with it."""
    dst = os.path.expanduser(dst)
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    digest = hashlib.sha256()
    fd, partial = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial",
                                   dir=os.path.dirname(dst) or ".")
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request) as response:
            while chunk := response.read(READ_DATA_CHUNK):
                out.write(chunk)
                digest.update(chunk)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                               f'"{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None,
                             weights_only: bool = False) -> dict[str, Any]:
    """The checkpoint at ``url``, downloaded once into ``model_dir`` (default
    ``get_dir()/checkpoints``) and loaded with ``torch.load``. With ``check_hash``, the
    file name's ``-<sha256 prefix>`` suffix is checked."""
    import torch

    directory = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(directory, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(directory, name)
    if not os.path.exists(cached):
        found = HASH_REGEX.search(name) if check_hash else None
        prefix = found.group(1) if found else None
        download_url_to_file(url, cached, prefix, progress=progress)
    return torch.load(cached, map_location=map_location, weights_only=weights_only)

