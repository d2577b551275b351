// Device enumeration through cl_api.h, and the lazily created contexts and queues.
#include "devices.h"

#include <memory>
#include <mutex>
#include <stdexcept>

namespace plait::xpu {
namespace {

using namespace cl;

// Reads a string property with OpenCL's two-call protocol (size, then bytes); "" on failure.
template <class Object, class Query>
std::string info_string(Object object, cl_info what, Query query) {
  size_t size = 0;
  if (query(object, what, 0, nullptr, &size) != kSuccess || size == 0) return "";
  std::string text(size, '\0');
  if (query(object, what, size, &text[0], nullptr) != kSuccess) return "";
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

template <class T>
T device_value(cl_device_id device, cl_info what) {
  T value{};
  if (api().clGetDeviceInfo(device, what, sizeof(T), &value, nullptr) != kSuccess) return T{};
  return value;
}

struct TypeName {
  const char* name;
  cl_device_type mask;
};
constexpr TypeName kTypes[] = {{"gpu", kDeviceTypeGpu},
                               {"cpu", kDeviceTypeCpu},
                               {"accelerator", kDeviceTypeAccelerator},
                               {"all", kDeviceTypeAll}};

cl_device_type parse_type(const std::string& type) {
  for (const TypeName& t : kTypes) {
    if (type == t.name) return t.mask;
  }
  throw std::invalid_argument("unknown OpenCL device type '" + type +
                              "'; expected gpu, cpu, accelerator or all");
}

std::string type_name(cl_device_type type) {
  for (const TypeName& t : kTypes) {
    if (t.mask != kDeviceTypeAll && (type & t.mask)) return t.name;
  }
  return "other";
}

DeviceInfo describe(cl_device_id device, int platform) {
  const Api& cl = api();
  DeviceInfo info;
  info.name = info_string(device, kDeviceName, cl.clGetDeviceInfo);
  info.vendor = info_string(device, kDeviceVendor, cl.clGetDeviceInfo);
  info.version = info_string(device, kDeviceVersion, cl.clGetDeviceInfo);
  info.driver_version = info_string(device, kDriverVersion, cl.clGetDeviceInfo);
  info.opencl_c_version = info_string(device, kDeviceOpenclCVersion, cl.clGetDeviceInfo);
  info.extensions = info_string(device, kDeviceExtensions, cl.clGetDeviceInfo);
  info.type = type_name(device_value<cl_device_type>(device, kDeviceType));
  info.platform = platform;
  info.global_memory = device_value<cl_ulong>(device, kDeviceGlobalMemSize);
  info.local_memory = device_value<cl_ulong>(device, kDeviceLocalMemSize);
  info.global_cache = device_value<cl_ulong>(device, kDeviceGlobalMemCacheSize);
  info.max_allocation = device_value<cl_ulong>(device, kDeviceMaxMemAllocSize);
  info.max_work_group_size = device_value<size_t>(device, kDeviceMaxWorkGroupSize);
  info.compute_units = device_value<cl_uint>(device, kDeviceMaxComputeUnits);
  info.max_clock_mhz = device_value<cl_uint>(device, kDeviceMaxClockFrequency);
  info.fp64 = device_value<cl_device_fp_config>(device, kDeviceDoubleFpConfig) != 0;
  info.fp16 = info.extensions.find("cl_khr_fp16") != std::string::npos;
  return info;
}

// The selected devices. Entries are never removed, so references to them stay valid.
struct Selection {
  std::mutex mutex;
  std::string type;  // "" until select_devices
  std::vector<std::unique_ptr<Device>> devices;
};

Selection& selection() {
  static Selection s;
  return s;
}

}  // namespace

Enumeration enumerate(const std::string& device_type) {
  const cl_device_type mask = parse_type(device_type);
  Enumeration out;
  const Api* table = load_api(&out.error);
  if (!table) return out;
  const Api& cl = *table;
  cl_uint count = 0;
  cl_int err = cl.clGetPlatformIDs(0, nullptr, &count);
  if (err == kPlatformNotFoundKhr || (err == kSuccess && count == 0)) {
    out.error = "no OpenCL platform is installed (the ICD loader found no driver): install one "
                "such as intel-opencl-icd, or pocl-opencl-icd for a CPU device";
    return out;
  }
  if (err != kSuccess) {
    out.error = "clGetPlatformIDs failed: " + error_name(err);
    return out;
  }
  std::vector<cl_platform_id> platforms(count);
  err = cl.clGetPlatformIDs(count, platforms.data(), nullptr);
  if (err != kSuccess) {
    out.error = "clGetPlatformIDs failed: " + error_name(err);
    return out;
  }
  for (cl_uint p = 0; p < count; ++p) {
    PlatformInfo platform;
    platform.name = info_string(platforms[p], kPlatformName, cl.clGetPlatformInfo);
    platform.vendor = info_string(platforms[p], kPlatformVendor, cl.clGetPlatformInfo);
    platform.version = info_string(platforms[p], kPlatformVersion, cl.clGetPlatformInfo);
    cl_uint devices = 0;
    // CL_DEVICE_NOT_FOUND only means this platform has no device of the type.
    if (cl.clGetDeviceIDs(platforms[p], mask, 0, nullptr, &devices) == kSuccess && devices > 0) {
      std::vector<cl_device_id> ids(devices);
      if (cl.clGetDeviceIDs(platforms[p], mask, devices, ids.data(), nullptr) == kSuccess) {
        for (cl_device_id id : ids) {
          out.devices.push_back(describe(id, static_cast<int>(p)));
          out.ids.push_back(id);
          out.owners.push_back(platforms[p]);
        }
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

int select_devices(const std::string& device_type) {
  Selection& s = selection();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.type.empty()) {
    if (s.type != device_type) {
      throw std::logic_error("xpu devices were already selected as OpenCL '" + s.type +
                             "' devices in this process; cannot switch to '" + device_type + "'");
    }
    return static_cast<int>(s.devices.size());
  }
  Enumeration e = enumerate(device_type);
  s.type = device_type;
  for (size_t i = 0; i < e.devices.size(); ++i) {
    auto d = std::make_unique<Device>();
    d->platform = e.owners[i];
    d->id = e.ids[i];
    d->info = e.devices[i];
    s.devices.push_back(std::move(d));
  }
  return static_cast<int>(s.devices.size());
}

int selected_count() {
  Selection& s = selection();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<int>(s.devices.size());
}

Device& device(int index) {
  Selection& s = selection();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (index < 0 || static_cast<size_t>(index) >= s.devices.size()) {
    throw std::out_of_range("xpu device index " + std::to_string(index) + " is out of range (" +
                            std::to_string(s.devices.size()) + " device(s))");
  }
  Device& d = *s.devices[static_cast<size_t>(index)];
  if (!d.queue) {
    const Api& cl = api();
    const cl_context_properties properties[] = {
        kContextPlatform, reinterpret_cast<cl_context_properties>(d.platform), 0};
    cl_int err = kSuccess;
    cl_context context = cl.clCreateContext(properties, 1, &d.id, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    // In order (no out-of-order flag): each command sees the previous ones' results, which is
    // what lets buffers return to the cache while kernels using them are still queued.
    // Profiling on: events measure elapsed time on the device.
    cl_command_queue queue =
        cl.clCreateCommandQueue(context, d.id, kQueueProfilingEnable, &err);
    if (err != kSuccess) {
      cl.clReleaseContext(context);
      throw Error("clCreateCommandQueue", err);
    }
    d.context = context;
    d.queue = queue;
  }
  return d;
}

bool is_initialized(int index) {
  Selection& s = selection();
  std::lock_guard<std::mutex> lock(s.mutex);
  return index >= 0 && static_cast<size_t>(index) < s.devices.size() &&
         s.devices[static_cast<size_t>(index)]->queue != nullptr;
}

void synchronize(int index) {
  if (!is_initialized(index)) return;
  Device& d = device(index);
  release_held(d);
  check(api().clFinish(d.queue), "clFinish");
}

const cl_event* hold_launch(Device& d) {
  if (d.info.type != "cpu") return nullptr;
  if (d.gate) return nullptr;  // in order: behind the first held kernel, so behind the gate
  cl_int err = kSuccess;
  d.gate = api().clCreateUserEvent(d.context, &err);
  if (err != kSuccess) {
    d.gate = nullptr;  // no gate: launch at once
    return nullptr;
  }
  return &d.gate;
}

namespace {

void open_gate(Device& d) {  // with d.gate_mutex held
  if (!d.gate) return;
  cl_event gate = d.gate;
  d.gate = nullptr;
  d.held = 0;
  const cl_int err = api().clSetUserEventStatus(gate, kComplete);
  api().clReleaseEvent(gate);
  check(err, "clSetUserEventStatus");
  api().clFlush(d.queue);
}

}  // namespace

void launched(Device& d) {
  if (d.gate && ++d.held >= kHeldLaunches) open_gate(d);
}

void release_held(Device& d) {
  std::lock_guard<std::mutex> lock(d.gate_mutex);
  open_gate(d);
}

}  // namespace plait::xpu
