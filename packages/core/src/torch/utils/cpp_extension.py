"""``torch.utils.cpp_extension``: building C++ extensions, as far as Plait can.

Plait has no C++ tensor API: there is no ``torch/extension.h``, ATen or libtorch to compile
against (kernels are written for a backend plugin instead: docs/backend-guide.md). What this
module gives programs written for PyTorch:

- the names they read while deciding what to build: ``CUDA_HOME``, ``ROCM_HOME``,
  ``SYCL_HOME``, ``IS_WINDOWS``/``IS_MACOS``/``IS_LINUX``, ``include_paths()`` and
  ``library_paths()`` (empty: nothing to compile against), ``is_ninja_available()``,
  ``get_default_build_root()``;
- ``CppExtension``/``CUDAExtension`` (setuptools extensions) and ``BuildExtension``
  (setuptools' ``build_ext``), which build extensions that do not use the C++ tensor API;
- ``load``/``load_inline``: sources that include a ``torch/``, ``ATen/``, ``c10/`` or
  ``pybind11/`` header raise a ``RuntimeError`` saying so before any compiler runs, which is
  what programs with a pure-Python fallback (``try: load(...) except Exception:``) expect;
  other sources (a CPython extension module written against ``Python.h``) are compiled with
  the machine's C++ compiler and imported.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

__all__ = [
    "BuildExtension", "CUDAExtension", "CUDA_HOME", "CppExtension", "IS_LINUX", "IS_MACOS",
    "IS_WINDOWS", "ROCM_HOME", "SYCL_HOME", "get_default_build_root", "include_paths",
    "is_ninja_available", "library_paths", "load", "load_inline", "verify_ninja_availability",
]

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform.startswith("darwin")
IS_LINUX = sys.platform.startswith("linux")

# Headers of PyTorch's C++ API (and the pybind11 that load_inline's bindings need).
TORCH_HEADERS = ("torch/", "ATen/", "c10/", "pybind11/")

NO_CPP_API = (
    "Plait has no C++ tensor API: {what} includes <{header}>, and there is no torch/extension.h, "
    "ATen or libtorch to compile against. Write the operation in Python (torch.library.custom_op "
    "registers it as an operator), or as a kernel of a backend plugin (docs/backend-guide.md)."
)


def _find_home(variables: tuple[str, ...], tool: str, default: str) -> str | None:
    """A toolkit's root: from its environment variables, else the folder above ``tool`` on
    PATH, else ``default`` if it exists."""
    for variable in variables:
        if os.environ.get(variable):
            return os.environ[variable]
    found = shutil.which(tool)
    if found:
        return os.path.dirname(os.path.dirname(os.path.realpath(found)))
    return default if os.path.isdir(default) else None


CUDA_HOME = _find_home(("CUDA_HOME", "CUDA_PATH"), "nvcc", "/usr/local/cuda")
ROCM_HOME = _find_home(("ROCM_HOME", "ROCM_PATH"), "hipcc", "/opt/rocm")
SYCL_HOME = _find_home(("CMPLR_ROOT",), "icpx", "/opt/intel/oneapi/compiler/latest")


def include_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """The folders of Plait's C++ headers: none (there is no C++ tensor API)."""
    return []


def library_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """The folders of Plait's C++ libraries: none."""
    return []


def is_ninja_available() -> bool:
    """Whether the ``ninja`` build tool is on PATH."""
    return shutil.which("ninja") is not None


def verify_ninja_availability() -> None:
    """Raise ``RuntimeError`` if ``ninja`` is not on PATH."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions")


def get_default_build_root() -> str:
    """Where ``load`` builds by default: ``$TORCH_EXTENSIONS_DIR``, else a folder under the
    temporary directory."""
    return os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        tempfile.gettempdir(), "torch_extensions")


def _refuse_torch_headers(what: str, text: str) -> None:
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#") or "include" not in stripped:
            continue
        target = stripped.split("include", 1)[1].strip().strip('<>"')
        for header in TORCH_HEADERS:
            if target.startswith(header):
                raise RuntimeError(NO_CPP_API.format(what=what, header=target))


def _setuptools() -> Any:
    try:
        import setuptools
    except ImportError as error:  # pragma: no cover - setuptools ships with most Pythons
        raise RuntimeError("torch.utils.cpp_extension needs setuptools: pip install "
                           "setuptools") from error
    return setuptools


def CppExtension(name: str, sources: list[str], *args: Any, **kwargs: Any) -> Any:
    """A ``setuptools.Extension`` for C++ sources (PyTorch's name and arguments); it adds no
    include or library folders, since Plait has no C++ API to link."""
    kwargs.setdefault("language", "c++")
    return _setuptools().Extension(name, sources, *args, **kwargs)


def CUDAExtension(name: str, sources: list[str], *args: Any, **kwargs: Any) -> Any:
    """A ``setuptools.Extension`` for CUDA and C++ sources; ``BuildExtension`` refuses the CUDA
    files (Plait does not drive nvcc for extensions)."""
    kwargs.setdefault("language", "c++")
    return _setuptools().Extension(name, sources, *args, **kwargs)


def _build_ext_base() -> type:
    try:
        from setuptools.command.build_ext import build_ext
    except ImportError:  # pragma: no cover
        return object
    return build_ext


class BuildExtension(_build_ext_base()):  # type: ignore[misc]
    """setuptools' ``build_ext`` for ``CppExtension``: C++17, and a clear error for sources
    that use PyTorch's C++ API or CUDA before the compiler runs."""

    @classmethod
    def with_options(cls, **options: Any) -> type:
        """A subclass whose constructor takes ``options`` as defaults (``no_python_abi_suffix``,
        ``use_ninja``...), as PyTorch's."""

        class WithOptions(cls):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **{**options, **kwargs})

        return WithOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", False)
        super().__init__(*args, **kwargs)

    def build_extensions(self) -> None:
        """Check every source, then build as setuptools does."""
        for extension in self.extensions:
            for source in extension.sources:
                if source.endswith((".cu", ".cuh")):
                    raise RuntimeError(f"{source}: Plait builds no CUDA extensions (no nvcc "
                                       "driver and no C++ tensor API)")
                with open(source, encoding="utf-8", errors="replace") as file:
                    _refuse_torch_headers(source, file.read())
            if isinstance(getattr(extension, "extra_compile_args", None), dict):
                extension.extra_compile_args = list(extension.extra_compile_args.get("cxx", []))
            if not any(arg.startswith("-std=") for arg in extension.extra_compile_args or []):
                extension.extra_compile_args = [*(extension.extra_compile_args or []),
                                                "-std=c++17"]
        super().build_extensions()


def _compiler() -> str:
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"


def _compile_module(name: str, sources: list[str], extra_cflags: list[str],
                    extra_ldflags: list[str], extra_include_paths: list[str],
                    build_directory: str, verbose: bool) -> ModuleType:
    """Compile ``sources`` into the CPython extension module ``name`` and import it."""
    os.makedirs(build_directory, exist_ok=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = os.path.join(build_directory, name + suffix)
    command = [_compiler(), "-shared", "-fPIC", "-O2", "-std=c++17",
               f"-I{sysconfig.get_paths()['include']}",
               *(f"-I{path}" for path in extra_include_paths), *extra_cflags, *sources,
               "-o", target, *extra_ldflags]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if verbose and done.stdout:
        sys.stderr.write(done.stdout)
    if done.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}':\n{done.stderr}")
    spec = importlib.util.spec_from_file_location(name, target)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"Error loading extension '{name}' from {target}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name: str, sources: str | list[str], extra_cflags: list[str] | None = None,
         extra_cuda_cflags: list[str] | None = None, extra_sycl_cflags: list[str] | None = None,
         extra_ldflags: list[str] | None = None, extra_include_paths: list[str] | None = None,
         build_directory: str | None = None, verbose: bool = False,
         with_cuda: bool | None = None, with_sycl: bool | None = None,
         is_python_module: bool = True, is_standalone: bool = False,
         keep_intermediates: bool = True) -> ModuleType:
    """Compile C++ ``sources`` into a Python extension module and import it (PyTorch's
    arguments). Sources that use PyTorch's C++ API raise ``RuntimeError`` before compiling."""
    files = [sources] if isinstance(sources, str) else list(sources)
    for source in files:
        if source.endswith((".cu", ".cuh")) or with_cuda:
            raise RuntimeError(f"{source}: Plait builds no CUDA extensions (no C++ tensor API)")
        with open(source, encoding="utf-8", errors="replace") as file:
            _refuse_torch_headers(source, file.read())
    if not is_python_module:
        raise RuntimeError("load(is_python_module=False) registers operators through "
                           "libtorch's TORCH_LIBRARY, which Plait does not have")
    directory = build_directory or os.path.join(get_default_build_root(), name)
    return _compile_module(name, files, list(extra_cflags or []), list(extra_ldflags or []),
                           list(extra_include_paths or []), directory, verbose)


def load_inline(name: str, cpp_sources: str | list[str],
                cuda_sources: str | list[str] | None = None,
                sycl_sources: str | list[str] | None = None,
                functions: list[str] | dict[str, str] | str | None = None,
                extra_cflags: list[str] | None = None, extra_cuda_cflags: list[str] | None = None,
                extra_sycl_cflags: list[str] | None = None,
                extra_ldflags: list[str] | None = None,
                extra_include_paths: list[str] | None = None,
                build_directory: str | None = None, verbose: bool = False,
                with_cuda: bool | None = None, with_sycl: bool | None = None,
                is_python_module: bool = True, with_pytorch_error_handling: bool = True,
                keep_intermediates: bool = True, use_pch: bool = False,
                no_implicit_headers: bool = False) -> ModuleType:
    """``load`` of source text. PyTorch prepends ``#include <torch/extension.h>`` and writes
    pybind11 bindings for ``functions``: both need its C++ API, so unless the sources are a
    complete CPython extension (``no_implicit_headers=True`` and no ``functions``) this raises
    ``RuntimeError`` before compiling."""
    if cuda_sources or with_cuda:
        raise RuntimeError(f"load_inline '{name}': Plait builds no CUDA extensions (no C++ "
                           "tensor API)")
    if functions or not no_implicit_headers:
        raise RuntimeError(NO_CPP_API.format(what=f"load_inline '{name}'",
                                             header="torch/extension.h"))
    texts = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    directory = build_directory or os.path.join(get_default_build_root(), name)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "main.cpp")
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n".join(texts))
    return load(name, [path], extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags,
                extra_include_paths, directory, verbose, with_cuda, with_sycl, is_python_module)
