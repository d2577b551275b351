// OpenCL platforms and devices, and one context and in-order queue per selected device.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cl_api.h"

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
  std::string driver_version;
  std::string opencl_c_version;
  std::string extensions;
  int platform = 0;  // index into Enumeration::platforms
  uint64_t global_memory = 0;
  uint64_t local_memory = 0;
  uint64_t global_cache = 0;
  uint64_t max_allocation = 0;
  uint64_t max_work_group_size = 0;
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  bool fp64 = false;
  bool fp16 = false;
};

struct Enumeration {
  std::vector<PlatformInfo> platforms;
  std::vector<DeviceInfo> devices;  // of the requested type, in platform order
  std::vector<cl::cl_device_id> ids;      // devices' OpenCL ids, same order
  std::vector<cl::cl_platform_id> owners; // each device's platform id, same order
  std::string error;                // why `devices` is empty ("" otherwise)
};

// Devices of `device_type`: "gpu" (what xpu means), "cpu", "accelerator" or "all". Throws
// std::invalid_argument for another type; OpenCL failures (no loader, no ICD, no platform) are
// reported in `error`, never thrown.
Enumeration enumerate(const std::string& device_type);

// A selected device: its context and in-order queue are created on first use.
struct Device {
  cl::cl_platform_id platform = nullptr;
  cl::cl_device_id id = nullptr;
  DeviceInfo info;
  cl::cl_context context = nullptr;
  cl::cl_command_queue queue = nullptr;
  // CPU devices: kernels queue behind a user event (the gate) and reach the device together
  // when it opens (see hold_launch); nullptr while none is held. gate_mutex guards both
  // (launches hold the GIL, waits release it).
  std::mutex gate_mutex;
  cl::cl_event gate = nullptr;
  unsigned held = 0;  // kernels behind the gate
};

// Kernels a CPU device holds behind its gate before it opens by itself.
constexpr unsigned kHeldLaunches = 64;

// The event a kernel launch on `d` waits for (nullptr: none, launch at once). On a CPU device
// (PoCL) each command handed to the device wakes its worker threads, which cost more than the
// kernel for a small op (futex wakes and lock hand-offs on every launch); held behind one user
// event, kernels go over when it opens, kHeldLaunches at a time or at the next wait for the
// queue, so the workers wake once per batch. The queue is in order, so nothing else changes.
// The caller holds d.gate_mutex from here until launched().
const cl::cl_event* hold_launch(Device& d);

// Counts a launch made behind the gate; opens it after kHeldLaunches (d.gate_mutex held).
void launched(Device& d);

// Opens `d`'s gate: the held kernels go to the device. Every wait for the queue (blocking
// reads and writes, synchronize) opens it first; without that the wait would never end.
void release_held(Device& d);

// Fixes which devices are xpu:0, xpu:1, ... (the devices of `device_type`), once per process;
// returns their number. Asking again with another type throws std::logic_error.
int select_devices(const std::string& device_type);

// The number of selected devices (0 before select_devices).
int selected_count();

// Selected device `index`, its context and queue created on the first call. Throws
// std::out_of_range for a bad index and cl::Error when OpenCL refuses the context or queue.
Device& device(int index);

// Whether device `index` has its context yet (nothing is created).
bool is_initialized(int index);

// Waits for everything queued on device `index` (nothing when it was never used).
void synchronize(int index);

}  // namespace plait::xpu
