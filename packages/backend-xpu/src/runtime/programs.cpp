// Program builds and kernel launches.
#include "programs.h"

#include <cstring>
#include <stdexcept>

#include "devices.h"

namespace plait::xpu {
namespace {

using namespace cl;

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (api().clGetProgramBuildInfo(program, device, kProgramBuildLog, 0, nullptr, &size) !=
          kSuccess ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  if (api().clGetProgramBuildInfo(program, device, kProgramBuildLog, size, &log[0], nullptr) !=
      kSuccess) {
    return "";
  }
  log.resize(log.find('\0') == std::string::npos ? size : log.find('\0'));
  return log;
}

// A program made from a binary, built; nullptr when the driver does not take the binary.
cl_program try_binary(const Device& d, const std::string& binary, const std::string& options) {
  const Api& cl = api();
  const size_t size = binary.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  cl_int status = kSuccess;
  cl_int err = kSuccess;
  cl_program program =
      cl.clCreateProgramWithBinary(d.context, 1, &d.id, &size, &bytes, &status, &err);
  if (err != kSuccess || status != kSuccess) {
    if (program) cl.clReleaseProgram(program);
    return nullptr;
  }
  if (cl.clBuildProgram(program, 1, &d.id, options.c_str(), nullptr, nullptr) != kSuccess) {
    cl.clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

}  // namespace

Program::Program(int index, const std::string& source, const std::string& options,
                 const std::string& binary)
    : device_(index) {
  const Device& d = xpu::device(index);
  const Api& cl = api();
  if (!binary.empty()) {
    program_ = try_binary(d, binary, options);
    from_binary_ = program_ != nullptr;
    if (program_) return;
  }
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = kSuccess;
  program_ = cl.clCreateProgramWithSource(d.context, 1, &text, &length, &err);
  check(err, "clCreateProgramWithSource");
  err = cl.clBuildProgram(program_, 1, &d.id, options.c_str(), nullptr, nullptr);
  if (err != kSuccess) {
    const std::string log = build_log(program_, d.id);
    cl.clReleaseProgram(program_);
    program_ = nullptr;
    throw std::runtime_error("OpenCL program build failed on " + d.info.name + " (" +
                             error_name(err) + ", options '" + options + "'):\n" + log);
  }
}

Program::~Program() {
  if (program_) api().clReleaseProgram(program_);
}

std::string Program::binary() const {
  size_t size = 0;
  check(api().clGetProgramInfo(program_, kProgramBinarySizes, sizeof(size), &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::string out(size, '\0');
  if (size == 0) return out;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&out[0]);
  check(api().clGetProgramInfo(program_, kProgramBinaries, sizeof(bytes), &bytes, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  return out;
}

Kernel::Kernel(std::shared_ptr<Program> program, const std::string& name)
    : program_(std::move(program)), name_(name) {
  cl_int err = kSuccess;
  kernel_ = api().clCreateKernel(program_->handle(), name.c_str(), &err);
  if (err != kSuccess) throw Error("clCreateKernel('" + name + "')", err);
}

Kernel::~Kernel() {
  if (kernel_) api().clReleaseKernel(kernel_);
}

void Kernel::set_packing(const std::vector<unsigned>& starts,
                         const std::vector<unsigned>& counts) {
  if (starts.size() != counts.size()) {
    throw std::invalid_argument("packed argument groups: one start per count");
  }
  places_.clear();
  packed_.clear();
  args_.clear();
  unsigned logical = 0;
  unsigned arg = 0;
  for (size_t g = 0; g < starts.size(); ++g) {
    if (starts[g] < logical || counts[g] == 0 || counts[g] > 8) {
      throw std::invalid_argument("packed argument groups take 1 to 8 values, in order, "
                                  "without overlap");
    }
    for (; logical < starts[g]; ++logical) places_.push_back({arg++, -1, 0});
    unsigned size = 2;
    while (size < counts[g]) size *= 2;
    Packed packed;
    packed.arg = arg;
    packed.size = 8 * size;
    packed_.push_back(packed);
    for (unsigned k = 0; k < counts[g]; ++k) {
      places_.push_back({arg, static_cast<int>(g), 8 * k});
    }
    logical += counts[g];
    ++arg;
  }
}

void Kernel::set_arg(unsigned index, size_t size, const void* value) {
  if (!places_.empty()) {
    if (index < places_.size()) {
      const Place& place = places_[index];
      if (place.group >= 0) {
        if (size != 8 || value == nullptr) {
          throw std::invalid_argument("kernel " + name_ + ": argument " +
                                      std::to_string(index) + " is packed: it takes 8 bytes");
        }
        Packed& packed = packed_[static_cast<size_t>(place.group)];
        if (std::memcmp(packed.bytes + place.offset, value, 8) != 0) {
          std::memcpy(packed.bytes + place.offset, value, 8);
          packed.dirty = true;
        }
        return;
      }
      index = place.arg;
    } else {  // past the last group: shifted by the values the groups fold
      index -= static_cast<unsigned>(places_.size()) - places_.back().arg - 1;
    }
  }
  set_kernel_arg(index, size, value);
}

void Kernel::flush_packed() {
  for (Packed& packed : packed_) {
    if (!packed.dirty) continue;
    const cl_int err = api().clSetKernelArg(kernel_, packed.arg, packed.size, packed.bytes);
    if (err != kSuccess) {
      throw Error("clSetKernelArg(" + name_ + ", " + std::to_string(packed.arg) + ")", err);
    }
    packed.dirty = false;
  }
}

void Kernel::set_kernel_arg(unsigned index, size_t size, const void* value) {
  const bool rememberable = value != nullptr && size <= kRemembered;
  if (index >= args_.size()) {
    args_.resize(index + 1);
  } else {
    const Remembered& last = args_[index];
    if (rememberable && last.known && last.size == size &&
        std::memcmp(last.bytes, value, size) == 0) {
      return;  // the driver holds these bytes already
    }
  }
  Remembered& slot = args_[index];
  slot.known = false;  // (until the driver has taken the new value)
  const cl_int err = api().clSetKernelArg(kernel_, index, size, value);
  if (err != kSuccess) {
    throw Error("clSetKernelArg(" + name_ + ", " + std::to_string(index) + ")", err);
  }
  if (rememberable) {
    std::memcpy(slot.bytes, value, size);
    slot.size = static_cast<uint8_t>(size);
    slot.known = true;
  }
}

void Kernel::enqueue(const std::vector<size_t>& global, const std::vector<size_t>& local) {
  if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size())) {
    throw std::invalid_argument("a kernel launch takes 1 to 3 global sizes, and as many local "
                                "sizes or none");
  }
  enqueue(static_cast<unsigned>(global.size()), global.data(),
          local.empty() ? nullptr : local.data());
}

void Kernel::enqueue(unsigned dims, const size_t* global, const size_t* local) {
  for (unsigned k = 0; k < dims; ++k) {
    if (global[k] == 0) return;  // nothing to run (a zero global size is an error in OpenCL)
  }
  flush_packed();
  if (!device_) device_ = &device(program_->device());
  Device& d = *device_;
  std::lock_guard<std::mutex> lock(d.gate_mutex);
  const cl_event* gate = hold_launch(d);
  const cl_int err = api().clEnqueueNDRangeKernel(d.queue, kernel_, dims, nullptr, global, local,
                                                  gate ? 1 : 0, gate, nullptr);
  if (err != kSuccess) throw Error("clEnqueueNDRangeKernel(" + name_ + ")", err);
  launched(d);
}

}  // namespace plait::xpu
