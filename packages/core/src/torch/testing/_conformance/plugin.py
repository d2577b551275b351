"""The pytest plugin of the conformance suite (entry point ``pytest11``: ``torch-conformance``).

``pytest --torch-backend=NAME`` adds one test item per (primitive, dtype), one per primitive
without samples (failing), and one gradient item per deterministic float64 op of the op
database, then prints the backend's coverage table in the terminal summary. Without test paths
on the command line only the suite runs; with them, it runs in addition to them.

Without the option the plugin only registers its options; none of the suite's modules is
imported (importing this one does import its parent packages, ``torch`` and ``torch.testing``).
"""

from __future__ import annotations

from typing import Any

import pytest

OPTION = "--torch-backend"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torch-backend", "Plait backend conformance suite")
    group.addoption(OPTION, metavar="NAME", default=None,
                    help="run the conformance suite of torch.testing against the backend "
                         "serving device type NAME (cpu, cuda, a plugin's device type)")
    group.addoption("--torch-backend-gradients", metavar="N", type=int, default=1,
                    help="op database samples gradchecked per op on the device (default 1; "
                         "0 skips the gradient checks)")
    group.addoption("--torch-backend-skip-dtypes", metavar="DTYPES", default="",
                    help="comma-separated dtype names the device does not have (float64 on "
                         "some GPUs): their items and every case using them are left out")
    group.addoption("--torch-backend-seed", metavar="SEED", type=int, default=0,
                    help="seed of the conformance sample values (default 0)")


def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("torch_backend", None)
    if not name:
        return
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        # no paths on the command line: run the suite alone, not the directory's tests
        config.args = []
    config.pluginmanager.register(ConformanceSuite(config, name), "torch-conformance-suite")


class ConformanceSuite:
    """The hooks active with ``--torch-backend``: collecting the items, the summary."""

    def __init__(self, config: pytest.Config, device_type: str) -> None:
        self.config = config
        self.device_type = device_type
        self.failed: list[str] = []  # node ids of failing suite items, for the summary

    @pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so that it applies to ours
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        import torch

        try:
            device = torch.device(self.device_type)
        except RuntimeError as exc:
            raise pytest.UsageError(f"{OPTION}={self.device_type}: {exc}") from None
        skip = frozenset(d.strip().removeprefix("torch.")
                         for d in config.getoption("torch_backend_skip_dtypes").split(",")
                         if d.strip())
        unknown = sorted(skip - set(torch._core.dtype.DTYPES))
        if unknown:
            raise pytest.UsageError(f"--torch-backend-skip-dtypes: unknown dtype(s) "
                                    f"{', '.join(unknown)}; known: "
                                    f"{', '.join(torch._core.dtype.DTYPES)}")
        root = BackendCollector.from_parent(
            session, name=f"torch-backend[{device.type}]", nodeid=f"torch-backend[{device.type}]",
            device_type=device.type, gradient_samples=config.getoption("torch_backend_gradients"),
            seed=config.getoption("torch_backend_seed"), skip_dtypes=skip)
        items.extend(root.collect())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and report.nodeid.startswith("torch-backend["):
            self.failed.append(report.nodeid.partition("::")[2])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from . import format_coverage

        tr = terminalreporter
        tr.write_sep("=", f"torch backend conformance: {self.device_type}")
        try:
            lines = format_coverage(self.device_type)
        except RuntimeError as exc:  # the backend could not initialise
            lines = [f"no coverage: {exc}"]
        for line in lines:
            tr.write_line(line)
        if self.failed:
            tr.write_line(f"  failed ({len(self.failed)}): {' '.join(self.failed)}")


class BackendCollector(pytest.Collector):
    """The suite for one device type: its primitive and gradient items."""

    def __init__(self, *, device_type: str, gradient_samples: int, seed: int,
                 skip_dtypes: frozenset[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.device_type = device_type
        self.gradient_samples = gradient_samples
        self.seed = seed
        self.skip_dtypes = skip_dtypes

    def collect(self) -> list[pytest.Item]:
        from ..._core import prims as _prims, registry as _registry
        from .samples import SAMPLES

        try:
            _registry.runtime(self.device_type)
        except RuntimeError as exc:
            # one failure that says why, rather than every item failing on the same error
            return [BackendItem.from_parent(self, name="initialise", error=str(exc))]
        items: list[pytest.Item] = []
        for name in _prims.PRIMITIVES:
            row = SAMPLES.get(name)
            if row is None:
                items.append(PrimitiveItem.from_parent(self, name=f"prims::{name}", prim=name,
                                                       dtype=None))
                continue
            for dtype in row.dtypes:
                if dtype in self.skip_dtypes:
                    continue
                items.append(PrimitiveItem.from_parent(self, name=f"prims::{name}[{dtype}]",
                                                       prim=name, dtype=dtype))
        if (self.gradient_samples > 0 and "float64" not in self.skip_dtypes
                and "float64" in _registry.capabilities(self.device_type)):
            from .gradients import rows

            for row in rows():
                items.append(GradientItem.from_parent(self, name=f"gradients::{row.name}",
                                                      row=row))
        return items


class BackendItem(pytest.Item):
    """Stands for the whole suite when the backend cannot initialise."""

    def __init__(self, *, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise NoBackend(self.error)

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


class PrimitiveItem(pytest.Item):
    """One primitive in one dtype: every case of its sample row."""

    def __init__(self, *, prim: str, dtype: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prim = prim
        self.dtype = dtype

    def runtest(self) -> None:
        from . import check_primitive

        if self.dtype is None:
            raise NoSamples(
                f"prims::{self.prim} has no conformance samples: add a row for it to "
                "SAMPLES in torch/testing/_conformance/samples.py (dtypes and cases)")
        parent = self.parent
        failures = check_primitive(self.prim, self.dtype, parent.device_type, parent.seed,
                                   parent.skip_dtypes)
        if failures:
            shown = failures[:12]
            more = f"\n... and {len(failures) - len(shown)} more" if len(failures) > 12 else ""
            raise Mismatch(f"prims::{self.prim} ({self.dtype}) on {parent.device_type}: "
                           f"{len(failures)} failing case(s)\n" + "\n".join(shown) + more)

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, (Mismatch, NoSamples)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


class GradientItem(pytest.Item):
    """gradcheck of one op database row on the device (a sample or two)."""

    def __init__(self, *, row: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row

    def runtest(self) -> None:
        from .gradients import check_gradients

        parent = self.parent
        if not check_gradients(self.row, parent.device_type, parent.gradient_samples):
            pytest.skip(f"{self.row.name}: no small float64 sample away from kinks")

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, AssertionError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class Mismatch(AssertionError):
    """A backend kernel disagrees with the reference."""


class NoBackend(AssertionError):
    """The backend under test failed to initialise."""


class NoSamples(AssertionError):
    """A primitive of the table has no samples in the suite."""

