"""``torch.torch_version``: :class:`TorchVersion`, the type of ``torch.__version__``.

A ``str`` that compares as a version: ``torch.__version__ >= "2.0"`` and
``torch.__version__ < (2, 14)`` order by PEP 440 (release, pre-, post- and dev-releases, the
local label), as ``packaging.version.Version`` does. The parser is written here so that
``import torch`` needs neither ``packaging`` (plait-core does not depend on it) nor its import
time. Against a string that is not a version (``"parrot"``) the comparison falls back to plain
string order; against a tuple or list of parts (``(2, 13)``) the parts are joined with dots.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

from .version import __version__ as _internal_version

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    import re
    from typing import Any

__all__ = ["InvalidVersion", "TorchVersion", "__version__"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version (``packaging.version.InvalidVersion``'s name)."""


# PEP 440's public grammar with its permitted spellings ("v2.0", "2.0-rc1", "2.0.post-1", "2_0"
# separators before pre/post/dev), and the local label after "+".
_VERSION_PATTERN = (
    r"""
    \s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*
    """
)


_compiled_regex: re.Pattern[str] | None = None


def _version_regex() -> re.Pattern[str]:
    # Compiled on the first comparison, not at `import torch` (the compile costs ~10 ms, and
    # importing `re` with the `enum` it needs a few more).
    global _compiled_regex
    if _compiled_regex is None:
        import re

        _compiled_regex = re.compile(_VERSION_PATTERN, re.VERBOSE | re.IGNORECASE)
    return _compiled_regex

# Pre-release phases in their order; the other spellings normalise to these.
_PRE_PHASE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "rc": 2, "c": 2, "pre": 2, "preview": 2}

_Key = tuple  # of version parts (typing's tuple[Any, ...])


def version_key(text: str) -> _Key:
    """A tuple that sorts versions as PEP 440 does.

    :param text: a version string such as ``"2.13.0+plait0.1.0"`` or ``"2.1.0rc1"``.
    :returns: a key; two versions are equal exactly when their keys are (``"2.13"`` and
        ``"2.13.0"`` are).
    :raises InvalidVersion: ``text`` is not a PEP 440 version.
    """
    match = _version_regex().fullmatch(text)
    if match is None:
        raise InvalidVersion(f"Invalid version: '{text}'")
    g = match.group
    release = [int(part) for part in g("release").split(".")]
    while len(release) > 1 and release[-1] == 0:  # 2.13.0 == 2.13
        release.pop()
    # Each optional segment becomes a tuple whose first item places "absent" where PEP 440 puts
    # it: a missing pre-release sorts after any pre-release, except for a dev-only version
    # (2.0.dev1 < 2.0a1); a missing post-release before any; a missing dev-release after any.
    if g("pre_l"):
        pre: _Key = (1, _PRE_PHASE[g("pre_l").lower()], int(g("pre_n") or 0))
    elif g("dev_l") and not (g("post_l") or g("post_n1")):
        pre = (0,)
    else:
        pre = (2,)
    if g("post_l") or g("post_n1"):
        post: _Key = (1, int(g("post_n1") or g("post_n2") or 0))
    else:
        post = (0,)
    dev: _Key = (0, int(g("dev_n") or 0)) if g("dev_l") else (1,)
    # Local labels: numeric parts compare as numbers and above any alphanumeric part; no label
    # sorts before any label (2.13.0 < 2.13.0+cpu).
    local = tuple(
        (1, int(part), "") if part.isdigit() else (0, 0, part.lower())
        for part in (g("local") or "").replace("-", ".").replace("_", ".").split(".") if part
    )
    return (int(g("epoch") or 0), tuple(release), pre, post, dev, local)


def _other_key(other: object) -> _Key | None:
    """The key of what a version may be compared with, or None for a type it does not compare
    with. A string that is not a version raises :class:`InvalidVersion`."""
    if isinstance(other, str):
        return version_key(other)
    if isinstance(other, Iterable):  # (2, 13) and [2, 12, 9]
        return version_key(".".join(str(part) for part in other))
    if hasattr(other, "release") and hasattr(other, "epoch"):  # a packaging Version
        return version_key(str(other))
    return None


class TorchVersion(str):
    """The version string of this build, comparable with version strings, tuples and lists.

    ``TorchVersion("2.13.0+plait0.1.0") > "2.13.0"`` (a local label sorts after the plain
    release) and ``== (2, 13, 0)`` is False for the same reason; ``== "2.13.0+plait0.1.0"``
    is True. Comparing with an int, a float or a tuple that makes no version raises
    ``TypeError``, as ``str`` does.
    """

    __slots__ = ()

    def _compare(self, other: object, op: Any) -> Any:
        try:
            other_key = _other_key(other)
            if other_key is None:
                return NotImplemented
            return op(version_key(self), other_key)
        except InvalidVersion:
            if isinstance(other, str):  # "parrot": plain string order
                return op(str(self), str(other))
            return NotImplemented

    def __lt__(self, other: object) -> Any:
        return self._compare(other, operator.lt)

    def __le__(self, other: object) -> Any:
        return self._compare(other, operator.le)

    def __gt__(self, other: object) -> Any:
        return self._compare(other, operator.gt)

    def __ge__(self, other: object) -> Any:
        return self._compare(other, operator.ge)

    def __eq__(self, other: object) -> Any:
        return self._compare(other, operator.eq)

    def __ne__(self, other: object) -> Any:
        # PyTorch's TorchVersion keeps str's !=, so there "2.13.0" != "2.13" while == holds
        # too; here != is the negation of == (a documented difference).
        equal = self._compare(other, operator.eq)
        return equal if equal is NotImplemented else not equal

    # Equal versions may be different strings ("2.13" and "2.13.0"); the hash stays the
    # string's, as PyTorch's does, so a TorchVersion keys a dict like its text.
    __hash__ = str.__hash__


__version__ = TorchVersion(_internal_version)
