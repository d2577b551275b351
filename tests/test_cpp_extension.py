"""torch.utils.cpp_extension: what programs read before building, C++ extensions that do not
use a C++ tensor API (built and imported), and a clear RuntimeError, before any compiler runs,
for sources that include PyTorch's C++ headers (Plait has none)."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from torch.utils import cpp_extension

COMPILER = shutil.which("c++") or shutil.which("g++")
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no C++ compiler on PATH")

# A complete CPython extension module: no torch headers.
PLAIN_MODULE = textwrap.dedent("""
    #include <Python.h>
    static PyObject* twice(PyObject*, PyObject* arg) {
        long value = PyLong_AsLong(arg);
        if (value == -1 && PyErr_Occurred()) return nullptr;
        return PyLong_FromLong(2 * value);
    }
    static PyMethodDef methods[] = {{"twice", twice, METH_O, "2 * x"},
                                    {nullptr, nullptr, 0, nullptr}};
    static PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", nullptr, -1, methods};
    PyMODINIT_FUNC PyInit_NAME() { return PyModule_Create(&module); }
""")

TORCH_SOURCE = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x; }\n"


def test_names_programs_read_before_building():
    assert cpp_extension.include_paths() == []
    assert cpp_extension.library_paths() == []
    assert cpp_extension.CUDA_HOME is None or isinstance(cpp_extension.CUDA_HOME, str)
    assert isinstance(cpp_extension.is_ninja_available(), bool)
    assert cpp_extension.IS_LINUX or cpp_extension.IS_MACOS or cpp_extension.IS_WINDOWS


def test_cuda_home_follows_the_environment(monkeypatch, tmp_path):
    import importlib

    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    module = importlib.reload(cpp_extension)
    try:
        assert module.CUDA_HOME == str(tmp_path)
    finally:
        monkeypatch.delenv("CUDA_HOME")
        importlib.reload(cpp_extension)


def test_torch_headers_are_refused_before_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))  # never reached
    source = tmp_path / "op.cpp"
    source.write_text(TORCH_SOURCE)
    with pytest.raises(RuntimeError, match=r"no C\+\+ tensor API.*torch/extension\.h"):
        cpp_extension.load("op_ext", [str(source)], build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match=r"no C\+\+ tensor API"):
        cpp_extension.load_inline("inline_ext", TORCH_SOURCE, functions=["f"],
                                  build_directory=str(tmp_path))
    cuda = tmp_path / "k.cu"
    cuda.write_text("__global__ void k() {}\n")
    with pytest.raises(RuntimeError, match="CUDA"):
        cpp_extension.load("cuda_ext", [str(cuda)], build_directory=str(tmp_path))


@needs_compiler
def test_a_plain_cpython_extension_builds_and_imports(tmp_path):
    source = tmp_path / "plain.cpp"
    source.write_text(PLAIN_MODULE.replace("NAME", "plait_plain_ext"))
    module = cpp_extension.load("plait_plain_ext", [str(source)],
                                build_directory=str(tmp_path / "build"))
    assert module.twice(21) == 42
    inline = cpp_extension.load_inline("plait_inline_ext",
                                       PLAIN_MODULE.replace("NAME", "plait_inline_ext"),
                                       no_implicit_headers=True,
                                       build_directory=str(tmp_path / "inline"))
    assert inline.twice(-4) == -8


def test_build_extension_refuses_torch_headers(tmp_path):
    from setuptools import Distribution

    source = tmp_path / "op.cpp"
    source.write_text(TORCH_SOURCE)
    distribution = Distribution({"name": "op", "ext_modules": [
        cpp_extension.CppExtension("op_ext", [str(source)])]})
    command = cpp_extension.BuildExtension.with_options(no_python_abi_suffix=True)(distribution)
    command.build_lib = str(tmp_path / "lib")
    command.build_temp = str(tmp_path / "tmp")
    command.ensure_finalized()
    with pytest.raises(RuntimeError, match=r"no C\+\+ tensor API"):
        command.run()
