// The CUDA runtime implementation of runtime.h (compiled by nvcc).
#include <cuda_runtime.h>

#include "runtime.h"

namespace plait::cuda {
namespace {

// Throws CudaError for a failed call, naming it.
void check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // reset the last-error state so the next call starts clean
  throw CudaError(std::string("CUDA error in ") + call + ": " + cudaGetErrorString(err) + " (" +
                  cudaGetErrorName(err) + ")");
}

// Makes `device` current for the calling thread and restores the previous one on scope exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
  }
  ~DeviceGuard() {
    if (previous_ >= 0 && previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_;
  int previous_ = -1;
};

}  // namespace

bool compiled_with_cuda() noexcept { return true; }

DeviceCount device_count() noexcept {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return {0, std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")"};
  }
  return {count, ""};
}

int runtime_version() noexcept {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0;
}

int driver_version() noexcept {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

void set_device(int device) { check(cudaSetDevice(device), "cudaSetDevice"); }

int current_device() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

void synchronize(int device) {
  DeviceGuard guard(device);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

bool query(int device) {
  DeviceGuard guard(device);
  const cudaError_t err = cudaStreamQuery(nullptr);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check(err, "cudaStreamQuery");
  return true;
}

DeviceProperties device_properties(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return {prop.name, prop.major, prop.minor, prop.totalGlobalMem, prop.multiProcessorCount};
}

void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) {
  DeviceGuard guard(device);
  check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

void* malloc_device(size_t nbytes, int device) {
  if (nbytes == 0) return nullptr;
  DeviceGuard guard(device);
  void* ptr = nullptr;
  check(cudaMalloc(&ptr, nbytes), "cudaMalloc");
  return ptr;
}

void free_device(void* ptr, int device) noexcept {
  if (ptr == nullptr) return;
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (previous != device) cudaSetDevice(device);
  // cudaErrorCudartUnloading at interpreter exit is expected: the driver frees the memory.
  if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
  if (previous >= 0 && previous != device) cudaSetDevice(previous);
}

void memcpy_h2d(uintptr_t dst, uintptr_t src, size_t nbytes) {
  check(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), nbytes,
                   cudaMemcpyHostToDevice),
        "cudaMemcpy (host to device)");
}

void memcpy_d2h(uintptr_t dst, uintptr_t src, size_t nbytes) {
  check(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), nbytes,
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy (device to host)");
}

void memcpy_d2d(uintptr_t dst, uintptr_t src, size_t nbytes) {
  check(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), nbytes,
                   cudaMemcpyDefault),
        "cudaMemcpy (device to device)");
}

void* load_library(const void* image, size_t nbytes) {
  (void)nbytes;  // a cubin or NUL-terminated PTX carries its own size
  cudaLibrary_t library = nullptr;
  check(cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData");
  return library;
}

void unload_library(void* library) noexcept {
  if (library != nullptr && cudaLibraryUnload(static_cast<cudaLibrary_t>(library)) != cudaSuccess)
    cudaGetLastError();  // at interpreter exit the runtime may be gone: the driver cleans up
}

void* library_kernel(void* library, const std::string& name) {
  cudaKernel_t kernel = nullptr;
  check(cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(library), name.c_str()),
        ("cudaLibraryGetKernel(" + name + ")").c_str());
  return kernel;
}

void launch(void* kernel, const char* name, int device, const unsigned (&grid)[3],
            const unsigned (&block)[3], void** args, bool wait) {
  DeviceGuard guard(device);
  const std::string call = std::string("the launch of ") + name;
  // A cudaKernel_t is accepted where cudaLaunchKernel takes a function.
  check(cudaLaunchKernel(static_cast<const void*>(kernel), dim3(grid[0], grid[1], grid[2]),
                         dim3(block[0], block[1], block[2]), args, 0, nullptr),
        call.c_str());
  if (wait) check(cudaStreamSynchronize(nullptr), (std::string("kernel ") + name).c_str());
}

}  // namespace plait::cuda
