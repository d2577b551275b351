// opencl.h without OpenCL (PLAIT_XPU_STUB): find_package(OpenCL) failed at build time.
#include <stdexcept>

#include "opencl.h"

namespace plait::xpu {

bool compiled_with_opencl() noexcept { return false; }

Enumeration enumerate(const std::string& device_type) {
  if (device_type != "gpu" && device_type != "cpu" && device_type != "accelerator" &&
      device_type != "all") {
    throw std::invalid_argument("unknown OpenCL device type '" + device_type +
                                "'; expected gpu, cpu, accelerator or all");
  }
  Enumeration out;
  out.error =
      "plait-backend-xpu was built without OpenCL (CMake found no OpenCL headers and loader); "
      "rebuild it where OpenCL is installed (e.g. ocl-icd-opencl-dev and opencl-headers)";
  return out;
}

}  // namespace plait::xpu
