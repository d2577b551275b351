// opencl.h over the OpenCL 1.2 API (through the ICD loader).
#define CL_TARGET_OPENCL_VERSION 120
#if defined(__APPLE__)
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include <stdexcept>

#include "opencl.h"

namespace plait::xpu {
namespace {

constexpr cl_int kPlatformNotFoundKhr = -1001;  // CL_PLATFORM_NOT_FOUND_KHR (cl_ext.h)

std::string error_text(cl_int err) {
  switch (err) {
    case kPlatformNotFoundKhr:
      return "no OpenCL platform is installed (CL_PLATFORM_NOT_FOUND_KHR): install an OpenCL "
             "driver (ICD) such as intel-opencl-icd, or pocl for a CPU device";
    case CL_DEVICE_NOT_FOUND:
      return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_HOST_MEMORY:
      return "CL_OUT_OF_HOST_MEMORY";
    case CL_OUT_OF_RESOURCES:
      return "CL_OUT_OF_RESOURCES";
    case CL_INVALID_VALUE:
      return "CL_INVALID_VALUE";
    default:
      return "OpenCL error " + std::to_string(err);
  }
}

// Reads a string property with OpenCL's two-call protocol (size, then bytes); "" on failure.
template <class Object, class Info, class Query>
std::string info_string(Object object, Info what, Query query) {
  size_t size = 0;
  if (query(object, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (query(object, what, size, &text[0], nullptr) != CL_SUCCESS) return "";
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

template <class T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  if (clGetDeviceInfo(device, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

cl_device_type parse_type(const std::string& type) {
  if (type == "gpu") return CL_DEVICE_TYPE_GPU;
  if (type == "cpu") return CL_DEVICE_TYPE_CPU;
  if (type == "accelerator") return CL_DEVICE_TYPE_ACCELERATOR;
  if (type == "all") return CL_DEVICE_TYPE_ALL;
  throw std::invalid_argument("unknown OpenCL device type '" + type +
                              "'; expected gpu, cpu, accelerator or all");
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

DeviceInfo describe(cl_device_id device, int platform) {
  DeviceInfo info;
  info.name = info_string(device, CL_DEVICE_NAME, clGetDeviceInfo);
  info.vendor = info_string(device, CL_DEVICE_VENDOR, clGetDeviceInfo);
  info.version = info_string(device, CL_DEVICE_VERSION, clGetDeviceInfo);
  info.type = type_name(device_value<cl_device_type>(device, CL_DEVICE_TYPE));
  info.platform = platform;
  info.global_memory = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.fp64 = device_value<cl_device_fp_config>(device, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  const std::string extensions = info_string(device, CL_DEVICE_EXTENSIONS, clGetDeviceInfo);
  info.fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
  return info;
}

}  // namespace

bool compiled_with_opencl() noexcept { return true; }

Enumeration enumerate(const std::string& device_type) {
  const cl_device_type mask = parse_type(device_type);
  Enumeration out;
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err != CL_SUCCESS || count == 0) {
    out.error = err == CL_SUCCESS ? "no OpenCL platform is installed" : error_text(err);
    return out;
  }
  std::vector<cl_platform_id> platforms(count);
  err = clGetPlatformIDs(count, platforms.data(), nullptr);
  if (err != CL_SUCCESS) {
    out.error = "clGetPlatformIDs failed: " + error_text(err);
    return out;
  }
  for (cl_uint p = 0; p < count; ++p) {
    PlatformInfo platform;
    platform.name = info_string(platforms[p], CL_PLATFORM_NAME, clGetPlatformInfo);
    platform.vendor = info_string(platforms[p], CL_PLATFORM_VENDOR, clGetPlatformInfo);
    platform.version = info_string(platforms[p], CL_PLATFORM_VERSION, clGetPlatformInfo);
    cl_uint devices = 0;
    // CL_DEVICE_NOT_FOUND only means this platform has no device of the type.
    if (clGetDeviceIDs(platforms[p], mask, 0, nullptr, &devices) == CL_SUCCESS && devices > 0) {
      std::vector<cl_device_id> ids(devices);
      if (clGetDeviceIDs(platforms[p], mask, devices, ids.data(), nullptr) == CL_SUCCESS) {
        for (cl_device_id id : ids) out.devices.push_back(describe(id, static_cast<int>(p)));
        platform.device_count = static_cast<int>(devices);
      }
    }
    out.platforms.push_back(platform);
  }
  if (out.devices.empty()) {
    std::string names;
    for (const PlatformInfo& platform : out.platforms) {
      names += (names.empty() ? "" : ", ") + platform.name;
    }
    out.error = "no OpenCL " + device_type + " device on the installed platform(s) (" + names +
                "); set PLAIT_XPU_DEVICE_TYPE=all to count devices of every type";
  }
  return out;
}

}  // namespace plait::xpu
