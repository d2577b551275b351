// runtime.h without CUDA (PLAIT_CUDA_STUB): nvcc was not found when the wheel was built.
// Queries answer "no device" with the reason; operations throw it.
#include "runtime.h"

namespace plait::cuda {
namespace {

constexpr const char* kReason = "plait-backend-cuda was built without CUDA (nvcc not found)";

[[noreturn]] void unavailable() { throw CudaError(kReason); }

}  // namespace

bool compiled_with_cuda() noexcept { return false; }
DeviceCount device_count() noexcept { return {0, kReason}; }
int runtime_version() noexcept { return 0; }
int driver_version() noexcept { return 0; }
void set_device(int) { unavailable(); }
int current_device() { unavailable(); }
void synchronize(int) { unavailable(); }
bool query(int) { unavailable(); }
DeviceProperties device_properties(int) { unavailable(); }
void mem_get_info(int, size_t*, size_t*) { unavailable(); }
void* malloc_device(size_t, int) { unavailable(); }
void free_device(void*, int) noexcept {}
void memcpy_h2d(uintptr_t, uintptr_t, size_t) { unavailable(); }
void memcpy_d2h(uintptr_t, uintptr_t, size_t) { unavailable(); }
void memcpy_d2d(uintptr_t, uintptr_t, size_t) { unavailable(); }
void* load_library(const void*, size_t) { unavailable(); }
void unload_library(void*) noexcept {}
void* library_kernel(void*, const std::string&) { unavailable(); }
void launch(void*, const char*, int, const unsigned (&)[3], const unsigned (&)[3], void**, bool) {
  unavailable();
}

}  // namespace plait::cuda
