// The CUDA runtime as plait-backend-cuda uses it, behind a header without CUDA types.
//
// Two implementations: runtime.cu (compiled by nvcc, links the CUDA runtime statically) and
// runtime_stub.cpp (PLAIT_CUDA_STUB: built when nvcc was not found; every query answers "no
// device" with the reason and every operation throws). The bindings are the same for both,
// so a build without CUDA still gives an importable `_C` that says why CUDA is unavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace plait::cuda {

// A failed CUDA call; the message names the call and CUDA's error string.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DeviceCount {
  int count;          // 0 when there is no usable device
  std::string error;  // why count is 0 ("" when a device was found or none is installed)
};

struct DeviceProperties {
  std::string name;
  int major;
  int minor;
  size_t total_memory;
  int multi_processor_count;
};

// True for the build with nvcc, false for the stub.
bool compiled_with_cuda() noexcept;

// Never throws: no driver, an old driver or no device all give {0, reason}.
DeviceCount device_count() noexcept;

// The runtime and driver versions as CUDA encodes them (13000 = 13.0); 0 when unknown.
int runtime_version() noexcept;
int driver_version() noexcept;

// These throw CudaError.
void set_device(int device);
int current_device();
void synchronize(int device);
bool query(int device);  // whether all work queued on the device's default stream is done
DeviceProperties device_properties(int device);
void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes);

// Device memory; `malloc_device(0, d)` returns nullptr. `free_device` never throws (it may
// run at interpreter exit, after the CUDA runtime has shut down).
void* malloc_device(size_t nbytes, int device);
void free_device(void* ptr, int device) noexcept;

// Synchronous byte copies; addresses as integers. Device-to-device copies may cross devices
// (unified addressing).
void memcpy_h2d(uintptr_t dst, uintptr_t src, size_t nbytes);
void memcpy_d2h(uintptr_t dst, uintptr_t src, size_t nbytes);
void memcpy_d2d(uintptr_t dst, uintptr_t src, size_t nbytes);

// Kernels compiled at run time (NVRTC, in Python) and loaded from their device image (a cubin
// or PTX): a library handle per image, a kernel handle per name. Handles are opaque pointers.
void* load_library(const void* image, size_t nbytes);
void unload_library(void* library) noexcept;
void* library_kernel(void* library, const std::string& name);

// Enqueues `kernel` (named `name` in errors) on the default stream of `device`: `grid` blocks
// of `block` threads, each of three dims; `args` points at each argument's value, as
// cudaLaunchKernel takes them. Launch-configuration errors throw. Errors while the kernel runs
// surface at the next synchronising call, unless `wait`: then the launch waits for the kernel
// and a fault throws naming it (PLAIT_CUDA_LAUNCH_BLOCKING=1, for debugging).
void launch(void* kernel, const char* name, int device, const unsigned (&grid)[3],
            const unsigned (&block)[3], void** args, bool wait);

}  // namespace plait::cuda
