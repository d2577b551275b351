// Python bindings of plait_backend_cuda._C: device queries, the device allocator and byte
// copies. The same file binds the CUDA build (kernels/runtime.cu) and the stub
// (kernels/runtime_stub.cpp, PLAIT_CUDA_STUB).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/runtime.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace plait::cuda {
namespace {

// Bytes in live DeviceBuffers, per device (memory_allocated / max_memory_allocated).
class MemoryStats {
 public:
  void add(int device, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[device];
    e.allocated += nbytes;
    if (e.allocated > e.peak) e.peak = e.allocated;
  }
  void sub(int device, size_t nbytes) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[device].allocated -= nbytes;
  }
  std::pair<size_t, size_t> get(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry& e = entries_[device];
    return {e.allocated, e.peak};
  }
  void reset_peak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[device];
    e.peak = e.allocated;
  }

 private:
  struct Entry {
    size_t allocated = 0;
    size_t peak = 0;
  };
  std::mutex mutex_;
  std::unordered_map<int, Entry> entries_;
};

// Never destroyed: buffers may be collected after static destructors at interpreter exit.
MemoryStats& memory_stats() {
  static MemoryStats* stats = new MemoryStats();
  return *stats;
}

// One cudaMalloc'd block, freed when the Python object is collected.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t nbytes, int device)
      : ptr_(malloc_device(nbytes, device)), nbytes_(nbytes), device_(device) {
    memory_stats().add(device_, nbytes_);
  }
  ~DeviceBuffer() {
    free_device(ptr_, device_);
    memory_stats().sub(device_, nbytes_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }
  size_t nbytes() const { return nbytes_; }
  int device() const { return device_; }

 private:
  void* ptr_;
  size_t nbytes_;
  int device_;
};

// PLAIT_CUDA_LAUNCH_BLOCKING=1: every launch waits for its kernel, so that a fault inside one
// raises at its launch, naming it (read once).
bool launch_blocking() {
  static const bool blocking = [] {
    const char* v = std::getenv("PLAIT_CUDA_LAUNCH_BLOCKING");
    return v != nullptr && std::string(v) == "1";
  }();
  return blocking;
}

// A loaded device image (cubin or PTX from NVRTC); unloaded when collected.
class Library {
 public:
  Library(nb::bytes image, int device) : device_(device) {
    if (image.size() == 0) throw nb::value_error("an empty device image");
    // PTX must end in a NUL; a cubin carries its size. Keep a copy with a NUL after it.
    std::string copy(image.c_str(), image.size());
    handle_ = load_library(copy.c_str(), copy.size() + 1);
  }
  ~Library() { unload_library(handle_); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  void* handle() const { return handle_; }
  int device() const { return device_; }

 private:
  void* handle_ = nullptr;
  int device_;
};

// One kernel of a Library, launched as OpenCL's NDRange is described (the renderer's
// convention, shared with plait-backend-xpu): `global` work items per dim, in blocks of
// `local`; CUDA gets global / local blocks. `signature` has a letter per argument: b a
// DeviceBuffer on the library's device, i/I 32-bit, l/L 64-bit (signed/unsigned), f float,
// d double. Every argument is checked here, before anything reaches the device.
class Kernel {
 public:
  Kernel(nb::object library, std::string name, std::string signature)
      : owner_(library),
        library_(nb::cast<Library*>(library)),
        name_(std::move(name)),
        signature_(std::move(signature)) {
    for (char c : signature_) {
      if (std::strchr("biIlLfd", c) == nullptr)
        throw nb::value_error(("unknown argument letter in kernel signature: " + signature_)
                                  .c_str());
    }
    handle_ = library_kernel(library_->handle(), name_);
  }

  void call(nb::tuple global, nb::tuple local, nb::args args) const {
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    const size_t dims = nb::len(global);
    if (dims < 1 || dims > 3 || nb::len(local) != dims)
      throw nb::value_error("global and local sizes need the same 1 to 3 dimensions");
    uint64_t threads = 1;
    for (size_t k = 0; k < dims; ++k) {
      const int64_t g = nb::cast<int64_t>(global[k]);
      const int64_t l = nb::cast<int64_t>(local[k]);
      if (l <= 0 || g < 0 || g % l != 0)
        throw nb::value_error(("kernel " + name_ + ": global size " + std::to_string(g) +
                               " is not a multiple of the block size " + std::to_string(l))
                                  .c_str());
      const int64_t blocks = g / l;
      const int64_t grid_limit = k == 0 ? std::numeric_limits<int32_t>::max() : 65535;
      if (blocks > grid_limit || l > 1024)
        throw nb::value_error(("kernel " + name_ + ": launch of " + std::to_string(blocks) +
                               " blocks of " + std::to_string(l) + " exceeds CUDA's limits")
                                  .c_str());
      grid[k] = static_cast<unsigned>(blocks);
      block[k] = static_cast<unsigned>(l);
      threads *= static_cast<uint64_t>(l);
    }
    if (threads > 1024) throw nb::value_error("more than 1024 threads per block");
    if (nb::len(args) != signature_.size())
      throw nb::type_error(("kernel " + name_ + " takes " + std::to_string(signature_.size()) +
                            " arguments, got " + std::to_string(nb::len(args)))
                               .c_str());
    for (unsigned g : grid) {
      if (g == 0) return;  // nothing to run
    }
    std::vector<uint64_t> values(signature_.size());
    std::vector<void*> pointers(signature_.size());
    for (size_t k = 0; k < signature_.size(); ++k) {
      nb::handle a = args[k];
      void* slot = &values[k];
      switch (signature_[k]) {
        case 'b': {
          const DeviceBuffer* buffer = nb::cast<const DeviceBuffer*>(a);
          if (buffer == nullptr || buffer->device() != library_->device())
            throw nb::value_error(("kernel " + name_ + ": argument " + std::to_string(k) +
                                   " is not a buffer on cuda:" +
                                   std::to_string(library_->device()))
                                      .c_str());
          const uintptr_t p = buffer->ptr();
          std::memcpy(slot, &p, sizeof p);
          break;
        }
        case 'i': {
          const int32_t v = nb::cast<int32_t>(a);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case 'I': {
          const uint32_t v = nb::cast<uint32_t>(a);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case 'l': {
          const int64_t v = nb::cast<int64_t>(a);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case 'L': {
          const uint64_t v = nb::cast<uint64_t>(a);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case 'f': {
          const float v = nb::cast<float>(a);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        default: {  // 'd'
          const double v = nb::cast<double>(a);
          std::memcpy(slot, &v, sizeof v);
        }
      }
      pointers[k] = slot;
    }
    launch(handle_, name_.c_str(), library_->device(), grid, block, pointers.data(),
           launch_blocking());
  }

  const std::string& name() const { return name_; }
  const std::string& signature() const { return signature_; }

 private:
  nb::object owner_;  // keeps the library loaded while the kernel lives
  const Library* library_;
  std::string name_;
  std::string signature_;
  void* handle_ = nullptr;
};

nb::dict properties(int device) {
  const DeviceProperties p = device_properties(device);
  nb::dict d;
  d["name"] = p.name;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["total_memory"] = p.total_memory;
  d["multi_processor_count"] = p.multi_processor_count;
  return d;
}

nb::dict build_info() {
  nb::dict d;
  d["cuda"] = compiled_with_cuda();
  d["runtime_version"] = runtime_version();
#ifdef PLAIT_CUDA_ARCHITECTURES
  d["architectures"] = std::string(PLAIT_CUDA_ARCHITECTURES);
#else
  d["architectures"] = std::string();
#endif
  d["cudart"] = std::string(compiled_with_cuda() ? "static" : "none");
  return d;
}

}  // namespace
}  // namespace plait::cuda

NB_MODULE(_C, m) {
  using namespace plait::cuda;
  using release_gil = nb::call_guard<nb::gil_scoped_release>;
  m.doc() = "Native part of plait-backend-cuda: device queries, allocator and copies.";
  // Kernels, plans and allocator blocks live in Python-level caches that the interpreter
  // frees in no fixed order at exit; nanobind's exit-time leak report would list them as
  // leaks although the process is ending and the memory is returned with it.
  nb::set_leak_warnings(false);

  nb::exception<CudaError>(m, "CudaError", PyExc_RuntimeError);

  m.def(
      "device_count",
      [] {
        const DeviceCount c = device_count();
        return std::make_pair(c.count, c.error);
      },
      "(number of usable devices, why it is 0 or ''); never raises.");
  m.def(
      "driver_error", [] { return device_count().error; },
      "Why no CUDA device is usable ('' when one is).");
  m.def("compiled_with_cuda", &compiled_with_cuda);
  m.def("runtime_version", &runtime_version);
  m.def("driver_version", &driver_version);
  m.def("build_info", &build_info);

  m.def("set_device", &set_device, "device"_a);
  m.def("current_device", &current_device);
  m.def("synchronize", &synchronize, "device"_a, release_gil());
  m.def("query", &query, "device"_a);
  m.def("device_properties", &properties, "device"_a);
  m.def(
      "mem_get_info",
      [](int device) {
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        mem_get_info(device, &free_bytes, &total_bytes);
        return std::make_pair(free_bytes, total_bytes);
      },
      "device"_a);

  nb::class_<DeviceBuffer>(m, "DeviceBuffer",
                           "A block of device memory, freed when this object is collected.")
      .def(nb::init<size_t, int>(), "nbytes"_a, "device"_a = 0)
      .def_prop_ro("ptr", &DeviceBuffer::ptr)
      .def_prop_ro("nbytes", &DeviceBuffer::nbytes)
      .def_prop_ro("device", &DeviceBuffer::device)
      .def("__repr__", [](const DeviceBuffer& b) {
        return "DeviceBuffer(nbytes=" + std::to_string(b.nbytes()) +
               ", device=" + std::to_string(b.device()) + ")";
      });
  nb::class_<Library>(m, "Library", "A device image (cubin or PTX) loaded for every device.")
      .def(nb::init<nb::bytes, int>(), "image"_a, "device"_a = 0)
      .def_prop_ro("device", &Library::device);
  nb::class_<Kernel>(m, "Kernel", "A kernel of a Library, called as kernel(global, local, *args).")
      .def(nb::init<nb::object, std::string, std::string>(), "library"_a, "name"_a,
           "signature"_a)
      .def("__call__", &Kernel::call)
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("signature", &Kernel::signature);
  m.def(
      "memory_stats",
      [](int device) { return memory_stats().get(device); }, "device"_a,
      "(allocated bytes, peak allocated bytes) of live DeviceBuffers on `device`.");
  m.def(
      "reset_peak_memory_stats", [](int device) { memory_stats().reset_peak(device); },
      "device"_a);

  m.def("memcpy_h2d", &memcpy_h2d, "dst"_a, "src"_a, "nbytes"_a, release_gil());
  m.def("memcpy_d2h", &memcpy_d2h, "dst"_a, "src"_a, "nbytes"_a, release_gil());
  m.def("memcpy_d2d", &memcpy_d2d, "dst"_a, "src"_a, "nbytes"_a, release_gil());
}
