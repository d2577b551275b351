"""plait-backend-cuda's program cache without a GPU or NVRTC: the shared cache
(``render_runtime_programs``) over cuda's builder, with a native module and an NVRTC that
record what they are asked. It compiles a source once per process, writes the cubin under a
folder named by NVRTC's version and the architecture, loads it from there in a new cache
instead of compiling, and compiles again over a file the driver rejects."""

from __future__ import annotations

import pytest

pytest.importorskip("plait_backend_cuda._C", reason="plait-backend-cuda is not installed")
from plait_backend_cuda import __version__, nvrtc, programs

SOURCE = 'extern "C" __global__ void scale(float* x) { x[0] *= 2.0f; }'


class _Library:
    def __init__(self, image: bytes, device: int) -> None:
        if not image.startswith(b"CUBIN"):
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")  # as the driver refuses junk
        self.image, self.device = image, device


class _Kernel:
    def __init__(self, library: _Library, name: str, signature: str) -> None:
        self.library, self.name, self.signature = library, name, signature


class _Native:
    Library = _Library
    Kernel = _Kernel


@pytest.fixture
def compiles(monkeypatch, tmp_path):
    """The sources NVRTC is asked to compile, as (source, arch, options)."""
    asked = []

    def compile_source(source, arch, name="plait.cu", options=(), check_only=False):
        asked.append((source, arch, options))
        return nvrtc.Compiled(image=b"CUBIN" + arch.encode() + source.encode(), log="")

    monkeypatch.setattr(nvrtc, "compile_source", compile_source)
    monkeypatch.setattr(nvrtc, "version", lambda: (13, 0))
    monkeypatch.setenv("PLAIT_CUDA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PLAIT_CUDA_DISK_CACHE", raising=False)
    return asked


def _cache():
    return programs.ProgramCache(programs.builder(_Native, lambda device: "sm_90"))


def test_a_source_compiles_once_and_its_cubin_is_reused_from_disk(compiles, tmp_path):
    cache = _cache()
    kernel = cache.kernel(0, SOURCE, "scale", "b")
    assert (kernel.name, kernel.signature) == ("scale", "b")
    assert cache.kernel(0, SOURCE, "scale", "b") is kernel
    assert cache.program(0, SOURCE) is kernel.library
    assert len(compiles) == 1 and compiles[0][:2] == (SOURCE, "sm_90")
    assert cache.stats["source_builds"] == 1 and cache.stats["memory_hits"] == 1
    written = list(tmp_path.rglob("*.cubin"))
    assert [p.parent.name for p in written] == [f"plait{__version__}-nvrtc13.0-sm_90"]
    assert written[0].read_bytes() == b"CUBINsm_90" + SOURCE.encode()

    again = _cache()  # a new process's cache: the cubin comes from disk
    assert again.program(0, SOURCE).image == written[0].read_bytes()
    assert len(compiles) == 1
    assert again.stats["binary_loads"] == 1 and not again.stats["source_builds"]


def test_a_rejected_cubin_is_compiled_again_and_rewritten(compiles, tmp_path):
    _cache().program(0, SOURCE)
    (path,) = tmp_path.rglob("*.cubin")
    path.write_bytes(b"junk")
    fresh = _cache()
    assert fresh.program(0, SOURCE).image.startswith(b"CUBIN")
    assert len(compiles) == 2 and fresh.stats["source_builds"] == 1
    assert path.read_bytes().startswith(b"CUBIN")


def test_options_name_another_program_and_reach_nvrtc(compiles, monkeypatch):
    cache = _cache()
    plain, fast = cache.program(0, SOURCE), cache.program(0, SOURCE, "--use_fast_math")
    assert plain is not fast
    assert [c[2] for c in compiles] == [(), ("--use_fast_math",)]


def test_disk_cache_off(compiles, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIT_CUDA_DISK_CACHE", "0")
    cache = _cache()
    cache.program(0, SOURCE)
    assert programs.cache_root("cuda") is None
    assert not list(tmp_path.rglob("*.cubin"))
    assert _cache().program(0, SOURCE) is not None and len(compiles) == 2


def test_plugin_hooks_answer_for_cuda_only():
    from plait_backend_cuda import plugin

    assert plugin.torch_backend_fast_path(device_type="cuda") is None  # no fast path yet
    assert plugin.torch_backend_codegen(device_type="cuda", target="reduction") is None
    assert plugin.torch_backend_codegen(device_type="xpu", target="pointwise") is None
    assert plugin.torch_backend_synchronize(device_type="xpu", device_index=0) is None
    assert type(plugin.torch_backend_codegen(device_type="cuda", target="pointwise")).__name__ \
        == "CudaCodegen"
