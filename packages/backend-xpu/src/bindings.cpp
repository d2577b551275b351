// Python bindings of plait_backend_xpu._C: OpenCL device discovery. The same file binds the
// OpenCL build (kernels/opencl.cpp) and the stub (kernels/opencl_stub.cpp, PLAIT_XPU_STUB).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <string>

#include "kernels/opencl.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace plait::xpu {
namespace {

nb::list platform_list(const Enumeration& e) {
  nb::list out;
  for (const PlatformInfo& p : e.platforms) {
    nb::dict d;
    d["name"] = p.name;
    d["vendor"] = p.vendor;
    d["version"] = p.version;
    d["device_count"] = p.device_count;
    out.append(d);
  }
  return out;
}

nb::list device_list(const Enumeration& e) {
  nb::list out;
  for (const DeviceInfo& info : e.devices) {
    nb::dict d;
    d["name"] = info.name;
    d["vendor"] = info.vendor;
    d["type"] = info.type;
    d["version"] = info.version;
    d["platform"] = e.platforms[static_cast<size_t>(info.platform)].name;
    d["global_memory"] = info.global_memory;
    d["fp64"] = info.fp64;
    d["fp16"] = info.fp16;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace plait::xpu

NB_MODULE(_C, m) {
  using namespace plait::xpu;
  m.doc() = "Native part of plait-backend-xpu: OpenCL device discovery.";

  m.def("compiled_with_opencl", &compiled_with_opencl);
  m.def(
      "device_count",
      [](const std::string& device_type) {
        const Enumeration e = enumerate(device_type);
        return std::make_pair(static_cast<int>(e.devices.size()), e.error);
      },
      "device_type"_a = "gpu",
      "(number of OpenCL devices of `device_type` (gpu, cpu, accelerator, all), why it is 0 or "
      "''); never raises for OpenCL failures.");
  m.def(
      "platforms",
      [](const std::string& device_type) { return platform_list(enumerate(device_type)); },
      "device_type"_a = "gpu",
      "The installed OpenCL platforms (name, vendor, version, device_count of the type).");
  m.def(
      "devices",
      [](const std::string& device_type) { return device_list(enumerate(device_type)); },
      "device_type"_a = "gpu",
      "The OpenCL devices of `device_type` (name, vendor, type, version, platform, "
      "global_memory, fp64, fp16).");
}
