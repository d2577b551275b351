// OpenCL device discovery as plait-backend-xpu uses it, behind a header without OpenCL types.
//
// Two implementations: opencl.cpp (built when CMake's find_package(OpenCL) succeeds; links the
// ICD loader) and opencl_stub.cpp (PLAIT_XPU_STUB: no OpenCL at build time; no platforms, and
// the reason says so). The bindings are the same for both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plait::xpu {

struct PlatformInfo {
  std::string name;
  std::string vendor;
  std::string version;
  int device_count = 0;  // devices of the requested type on this platform
};

struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string type;  // "gpu", "cpu", "accelerator" or "other"
  std::string version;
  int platform = 0;  // index into Enumeration::platforms
  uint64_t global_memory = 0;
  bool fp64 = false;
  bool fp16 = false;
};

struct Enumeration {
  std::vector<PlatformInfo> platforms;
  std::vector<DeviceInfo> devices;  // of the requested type, in platform order
  std::string error;                // why `devices` is empty ("" otherwise)
};

// True for the build with OpenCL, false for the stub.
bool compiled_with_opencl() noexcept;

// Devices of `device_type`: "gpu" (what xpu means), "cpu", "accelerator" or "all" (any type,
// e.g. PoCL's CPU device for tests). Throws std::invalid_argument for another type; OpenCL
// failures (no ICD, no platform) are reported in `error`, never thrown.
Enumeration enumerate(const std::string& device_type);

}  // namespace plait::xpu
