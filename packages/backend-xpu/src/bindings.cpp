// Python bindings of plait_backend_xpu._C: the OpenCL runtime (devices, memory, programs).
// Every OpenCL call goes through runtime/cl_api.h, resolved at run time: importing _C never
// needs an OpenCL library, and a missing one shows as device_count() == (0, reason).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/cl_api.h"
#include "runtime/devices.h"
#include "runtime/fast.h"
#include "runtime/memory.h"
#include "runtime/programs.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace plait::xpu {
namespace {

using HostIn = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostOut = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

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

nb::dict device_dict(const DeviceInfo& info, const std::string& platform) {
  nb::dict d;
  d["name"] = info.name;
  d["vendor"] = info.vendor;
  d["type"] = info.type;
  d["version"] = info.version;
  d["driver_version"] = info.driver_version;
  d["opencl_c_version"] = info.opencl_c_version;
  d["extensions"] = info.extensions;
  d["platform"] = platform;
  d["global_memory"] = info.global_memory;
  d["local_memory"] = info.local_memory;
  d["global_cache"] = info.global_cache;
  d["max_allocation"] = info.max_allocation;
  d["max_work_group_size"] = info.max_work_group_size;
  d["compute_units"] = info.compute_units;
  d["max_clock_mhz"] = info.max_clock_mhz;
  d["fp64"] = info.fp64;
  d["fp16"] = info.fp16;
  return d;
}

nb::list device_list(const Enumeration& e) {
  nb::list out;
  for (const DeviceInfo& info : e.devices) {
    out.append(device_dict(info, e.platforms[static_cast<size_t>(info.platform)].name));
  }
  return out;
}

// -- non-blocking host -> device copies keep their source alive until the copy is done -------

struct PendingWrite {
  cl::cl_event event;
  int device;
  HostIn source;  // holds a reference to the host array
};

// Touched with the GIL held only (bindings run under it), so no lock.
std::vector<PendingWrite>& pending_writes() {
  static auto* pending = new std::vector<PendingWrite>();  // never destroyed: exit-safe
  return *pending;
}

constexpr size_t kMaxPendingWrites = 256;

bool is_complete(cl::cl_event event) {
  cl::cl_int status = 0;
  const cl::cl_int err = cl::api().clGetEventInfo(event, cl::kEventCommandExecutionStatus,
                                                  sizeof(status), &status, nullptr);
  return err != cl::kSuccess || status <= cl::kComplete;  // negative: failed, also finished
}

// Drops finished writes (all of `device`'s when `all`, -1: every device's, after a wait).
void retire_writes(int device, bool all) {
  auto& pending = pending_writes();
  std::vector<PendingWrite> keep;
  for (PendingWrite& w : pending) {
    const bool mine = device < 0 || w.device == device;
    if (mine && (all || is_complete(w.event))) {
      cl::api().clReleaseEvent(w.event);
    } else {
      keep.push_back(std::move(w));
    }
  }
  pending.swap(keep);
}

void write_bytes(const Buffer& dst, size_t offset, HostIn src, bool non_blocking) {
  if (!non_blocking) {
    nb::gil_scoped_release unlocked;
    write(dst, offset, src.data(), src.size(), true, nullptr);
    return;
  }
  retire_writes(dst.device(), false);
  if (pending_writes().size() >= kMaxPendingWrites) {
    // Bound the host memory held: wait for the device's queue, then drop its writes.
    {
      nb::gil_scoped_release unlocked;
      synchronize(dst.device());
    }
    retire_writes(dst.device(), true);
  }
  cl::cl_event done = nullptr;
  write(dst, offset, src.data(), src.size(), false, &done);
  if (done) pending_writes().push_back({done, dst.device(), src});
}

void read_bytes(HostOut dst, const Buffer& src, size_t offset) {
  {
    nb::gil_scoped_release unlocked;
    read(src, offset, dst.data(), dst.size());
  }
  retire_writes(src.device(), false);
}

void synchronize_device(int device) {
  {
    nb::gil_scoped_release unlocked;
    synchronize(device);
  }
  retire_writes(device, true);
}

nb::dict stats_dict(int device) {
  const MemoryStats s = memory_stats(device);
  nb::dict d;
  d["allocated_bytes"] = s.allocated;
  d["allocated_bytes_peak"] = s.allocated_peak;
  d["requested_bytes"] = s.requested;
  d["reserved_bytes"] = s.reserved;
  d["reserved_bytes_peak"] = s.reserved_peak;
  d["active_blocks"] = s.active_blocks;
  d["cached_blocks"] = s.cached_blocks;
  d["device_allocations"] = s.device_allocations;
  d["device_frees"] = s.device_frees;
  d["alloc_retries"] = s.alloc_retries;
  d["ooms"] = s.ooms;
  return d;
}

std::vector<size_t> sizes(nb::handle sequence) {
  std::vector<size_t> out;
  if (sequence.is_none()) return out;
  for (nb::handle item : sequence) out.push_back(nb::cast<size_t>(item));
  return out;
}

// A kernel with the types of its arguments, one letter each: b (buffer), i/I (32-bit int,
// unsigned), l/L (64-bit), f (float), d (double).
struct BoundKernel {
  std::shared_ptr<Kernel> kernel;
  std::string signature;
};

// A kernel's signature: one letter per argument (`b` buffer, `i/I/l/L` ints, `f/d` floats);
// letters in parentheses are 64-bit ints (`l`/`L`) that the kernel takes as one vector
// argument (Kernel::set_packing), passed one by one all the same. Returns the letters alone.
std::string unpack_signature(const std::string& signature, Kernel& kernel) {
  std::string letters;
  std::vector<unsigned> starts;
  std::vector<unsigned> counts;
  bool open = false;
  for (const char c : signature) {
    if (c == '(') {
      if (open) throw nb::value_error("a kernel signature's groups do not nest");
      open = true;
      starts.push_back(static_cast<unsigned>(letters.size()));
      counts.push_back(0);
    } else if (c == ')') {
      if (!open || counts.back() == 0) throw nb::value_error("an empty or unopened group");
      open = false;
    } else {
      if (open) {
        if (c != 'l' && c != 'L') throw nb::value_error("a packed group holds l or L only");
        ++counts.back();
      }
      letters.push_back(c);
    }
  }
  if (open) throw nb::value_error("a kernel signature's group is not closed");
  if (!starts.empty()) kernel.set_packing(starts, counts);
  return letters;
}

template <class T>
void set_value(Kernel& k, unsigned index, nb::handle value) {
  const T v = nb::cast<T>(value);
  k.set_arg(index, sizeof(T), &v);
}

void launch(BoundKernel& bound, nb::handle global, nb::handle local, nb::args args) {
  Kernel& k = *bound.kernel;
  if (args.size() != bound.signature.size()) {
    throw nb::type_error(("kernel " + k.name() + " takes " +
                          std::to_string(bound.signature.size()) + " arguments (" +
                          bound.signature + "), got " + std::to_string(args.size()))
                             .c_str());
  }
  for (unsigned i = 0; i < bound.signature.size(); ++i) {
    nb::handle value = args[i];
    switch (bound.signature[i]) {
      case 'b': {
        const Buffer& b = nb::cast<const Buffer&>(value);
        if (b.mem() && b.device() != k.program()->device()) {
          throw nb::value_error(("kernel " + k.name() + ": argument " + std::to_string(i) +
                                 " is on xpu:" + std::to_string(b.device()) +
                                 ", the kernel on xpu:" +
                                 std::to_string(k.program()->device()))
                                    .c_str());
        }
        cl::cl_mem mem = b.mem();
        k.set_arg(i, sizeof(mem), &mem);
        break;
      }
      case 'i': set_value<int32_t>(k, i, value); break;
      case 'I': set_value<uint32_t>(k, i, value); break;
      case 'l': set_value<int64_t>(k, i, value); break;
      case 'L': set_value<uint64_t>(k, i, value); break;
      case 'f': set_value<float>(k, i, value); break;
      case 'd': set_value<double>(k, i, value); break;
      default:
        throw nb::value_error(("kernel signature letter '" +
                               std::string(1, bound.signature[i]) + "' is not one of bilLIfd")
                                  .c_str());
    }
  }
  k.enqueue(sizes(global), sizes(local));
}

// -- the fast path: prepared launches called with operand addresses ------------------------

// A prepared launch as Python holds it: the launch, the element count and output size of its
// call signature (0 for the fast path's per-operation entries, which take them per call), and
// the counter of kernels run (kernels.CALLS) with its key, which every run bumps.
struct PreparedLaunch {
  Launch launch;
  size_t numel;
  size_t out_nbytes;
  nb::object calls;
  nb::object name;
};

Slot slot_of(nb::handle item) {
  const auto t = nb::cast<nb::tuple>(item);
  if (t.size() != 4) throw nb::value_error("a launch slot is (kind, operand, size, value)");
  const int kind = nb::cast<int>(t[0]);
  if (kind < Slot::kBuffer || kind > Slot::kFixed) throw nb::value_error("bad launch slot kind");
  Slot s{static_cast<Slot::Kind>(kind), nb::cast<uint8_t>(t[1]), nb::cast<uint32_t>(t[2]), 0};
  if (s.kind == Slot::kFixed) {
    s.value = nb::cast<uint64_t>(t[3]);  // (Python gives the bits, wrapped to 64)
    if (s.size != 4 && s.size != 8) throw nb::value_error("a fixed argument is 4 or 8 bytes");
  } else if ((s.kind == Slot::kOffset && s.size == 0) ||
             (s.kind == Slot::kScalar && s.size != 4 && s.size != 8)) {
    throw nb::value_error("bad launch slot size");
  }
  return s;
}

void count_run(const PreparedLaunch& p) {
  PyObject* calls = p.calls.ptr();
  PyObject* key = p.name.ptr();
  PyObject* before = PyDict_GetItemWithError(calls, key);  // borrowed
  if (!before && PyErr_Occurred()) throw nb::python_error();
  PyObject* after = PyLong_FromLongLong((before ? PyLong_AsLongLong(before) : 0) + 1);
  if (!after || PyDict_SetItem(calls, key, after) != 0) {
    Py_XDECREF(after);
    throw nb::python_error();
  }
  Py_DECREF(after);
}

nb::object run_prepared(const PreparedLaunch& p, const Location* inputs, size_t numel,
                        size_t out_nbytes, double scalar) {
  std::unique_ptr<Buffer> out;
  try {
    out = p.launch.run(inputs, numel, out_nbytes, scalar);
  } catch (const OutOfMemory&) {
    // the generic path allocates again and raises core's error (a RuntimeError, as PyTorch's)
    return nb::none();
  }
  if (!out) return nb::none();
  if (numel) count_run(p);
  return nb::cast(out.release(), nb::rv_policy::take_ownership);
}

nb::object call_prepared(const PreparedLaunch& p, nb::args addresses) {
  const unsigned n = p.launch.inputs();
  if (addresses.size() != n) {
    throw nb::type_error(("a prepared launch takes " + std::to_string(n) + " addresses, got " +
                          std::to_string(addresses.size())).c_str());
  }
  Location inputs[8];
  for (unsigned k = 0; k < n; ++k) {
    if (!locate(nb::cast<uint64_t>(addresses[k]), &inputs[k])) return nb::none();
  }
  return run_prepared(p, inputs, p.numel, p.out_nbytes, 0.0);
}

// A launch into the existing memory at `out` (FastPath.prepare_into): of two inputs, `out =
// out <op> other` (the first input is the output itself); of one, `out = op(other)` (a copy).
// False: an address is not a block of the launch's device (nothing enqueued).
bool run_into(const PreparedLaunch& p, uint64_t out, uint64_t other) {
  const unsigned n = p.launch.inputs();
  if (n != 1 && n != 2) throw nb::type_error("a launch into memory takes one or two inputs");
  Location in[2];
  if (!locate(out, &in[0]) || !locate(other, &in[1])) return false;
  if (!p.launch.run_into(in[0], n == 2 ? in : in + 1, p.numel, 0.0)) return false;
  if (p.numel) count_run(p);
  return true;
}

// A launch into the existing memory at `out` from inputs at their own addresses
// (FastPath.prepare_out: an out= result written by the op's one launch). False: an address is
// not a block of the launch's device (nothing enqueued).
bool run_write(const PreparedLaunch& p, uint64_t out, nb::args addresses) {
  const unsigned n = p.launch.inputs();
  if (addresses.size() != n) {
    throw nb::type_error(("a prepared launch takes " + std::to_string(n) + " addresses, got " +
                          std::to_string(addresses.size())).c_str());
  }
  Location target;
  Location inputs[8];
  if (!locate(out, &target)) return false;
  for (unsigned k = 0; k < n; ++k) {
    if (!locate(nb::cast<uint64_t>(addresses[k]), &inputs[k])) return false;
  }
  if (!p.launch.run_into(target, inputs, p.numel, 0.0)) return false;
  if (p.numel) count_run(p);
  return true;
}

// core's hookspecs.FastPath entry points in native code. Each (kind, op code, dtype code,
// device) names one launch (a full sum's "op code" is its count), asked of `resolve(kind, op, dtype, device)` at its first call
// (a PreparedLaunch, or None: that entry always answers None, the generic path's call).
class FastEntries {
 public:
  enum Kind { kBinary = 0, kScalar = 1, kReversed = 2, kUnary = 3, kSum = 4 };

  explicit FastEntries(nb::object resolve) : resolve_(std::move(resolve)) {}

  nb::object binary(int op, int dtype, size_t nbytes, size_t numel, uint64_t a, uint64_t b) {
    Location in[2];
    if (!locate(a, &in[0]) || !locate(b, &in[1])) return nb::none();
    const PreparedLaunch* p = entry(kBinary, op, dtype, in[0].device);
    return p ? run_prepared(*p, in, numel, nbytes, 0.0) : nb::none();
  }

  nb::object binary_scalar(int op, int dtype, size_t nbytes, size_t numel, uint64_t a,
                           double scalar, bool reversed) {
    Location in[1];
    if (!locate(a, &in[0])) return nb::none();
    const PreparedLaunch* p = entry(reversed ? kReversed : kScalar, op, dtype, in[0].device);
    return p ? run_prepared(*p, in, numel, nbytes, scalar) : nb::none();
  }

  nb::object unary(int op, int dtype, size_t nbytes, size_t numel, uint64_t a) {
    Location in[1];
    if (!locate(a, &in[0])) return nb::none();
    const PreparedLaunch* p = entry(kUnary, op, dtype, in[0].device);
    return p ? run_prepared(*p, in, numel, nbytes, 0.0) : nb::none();
  }

  // The full sum of `numel` contiguous elements: a launch per (dtype, numel), whose prepared
  // launch fixes its count and output size (the resolver's op code is the count).
  nb::object sum_all(int dtype, size_t itemsize, size_t numel, uint64_t a) {
    Location in[1];
    if (numel == 0 || numel > 0x7fffffffu || !locate(a, &in[0])) return nb::none();
    if (entries_.size() > kMaxEntries) entries_.clear();  // a loop over changing sizes
    const PreparedLaunch* p = entry(kSum, static_cast<int>(numel), dtype, in[0].device);
    (void)itemsize;
    return p ? run_prepared(*p, in, p->numel, p->out_nbytes, 0.0) : nb::none();
  }

 private:
  const PreparedLaunch* entry(int kind, int op, int dtype, int device) {
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(op)) << 32) |
                         (static_cast<uint64_t>(dtype & 0xff) << 16) |
                         (static_cast<uint64_t>(device & 0xff) << 8) |
                         static_cast<uint64_t>(kind);
    auto found = entries_.find(key);
    if (found == entries_.end()) {
      nb::object launch = resolve_(kind, op, dtype, device);
      if (!launch.is_none() && !nb::isinstance<PreparedLaunch>(launch)) {
        throw nb::type_error("a fast path resolver returns a Launch or None");
      }
      found = entries_.emplace(key, std::move(launch)).first;
    }
    return found->second.is_none() ? nullptr : nb::inst_ptr<PreparedLaunch>(found->second);
  }

  static constexpr size_t kMaxEntries = 4096;
  nb::object resolve_;
  std::unordered_map<uint64_t, nb::object> entries_;
};

}  // namespace
}  // namespace plait::xpu

NB_MODULE(_C, m) {
  using namespace plait::xpu;
  m.doc() = "Native part of plait-backend-xpu: the OpenCL runtime, loaded at run time.";
  // Kernels, plans and allocator blocks live in Python-level caches that the interpreter
  // frees in no fixed order at exit; nanobind's exit-time leak report would list them as
  // leaks although the process is ending and the memory is returned with it.
  nb::set_leak_warnings(false);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });

  // -- loader and devices ----------------------------------------------------------------------
  m.def("compiled_with_opencl", [] { return true; },
        "True: OpenCL is loaded at run time, so every build can use it.");
  m.def("opencl_library", [] {
    std::string error;
    plait::xpu::cl::load_api(&error);
    return std::make_pair(plait::xpu::cl::library_name(), error);
  }, "(the ICD loader opened, '') or ('', why it could not be opened).");
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
      "The OpenCL devices of `device_type` (name, vendor, type, versions, platform, memory "
      "sizes, compute units, fp64, fp16...).");
  m.def("select_devices", &select_devices, "device_type"_a,
        "Fix the devices of `device_type` as xpu:0, xpu:1... (once per process); their number.");
  m.def("selected_count", &selected_count);
  m.def("is_initialized", &is_initialized, "device"_a,
        "Whether the device's context and queue exist yet.");
  m.def("init_device", [](int index) { device(index); }, "device"_a,
        "Create the device's context and in-order queue now.");
  m.def("synchronize", &synchronize_device, "device"_a,
        "Wait for everything queued on the device.");

  // -- memory ---------------------------------------------------------------------------------
  nb::class_<Buffer>(m, "Buffer", "A block of device memory from the caching allocator.")
      .def(nb::init<size_t, int>(), "nbytes"_a, "device"_a = 0)
      .def_prop_ro("ptr", &Buffer::address, "A stand-in address, unique to the block.")
      .def_prop_ro("nbytes", &Buffer::nbytes)
      .def_prop_ro("capacity", &Buffer::capacity, "The size class the block came from.")
      .def_prop_ro("device", &Buffer::device);
  m.def("size_class", &size_class, "nbytes"_a);
  m.def("memory_stats", &stats_dict, "device"_a);
  m.def("reset_peak_memory_stats", &reset_peak_memory_stats, "device"_a);
  m.def("reset_accumulated_memory_stats", &reset_accumulated_memory_stats, "device"_a,
        "Zero the counters that only grow (allocations, frees, retries, out-of-memory errors).");
  m.def("set_memory_limit", &set_memory_limit, "device"_a, "nbytes"_a,
        "The most bytes the allocator may reserve on the device (0: no limit).");
  m.def("memory_blocks", [](int device) {
    nb::list out;
    for (const BlockInfo& b : memory_blocks(device)) {
      out.append(nb::make_tuple(b.address, b.size, b.active));
    }
    return out;
  }, "device"_a, "(stand-in address, size class, in use) of every block the allocator holds "
     "on the device, in address order.");
  m.def("empty_cache", &empty_cache, "device"_a = -1,
        "Release the unused cached blocks of a device (-1: all) to OpenCL.");
  m.def("write", &write_bytes, "dst"_a, "offset"_a, "src"_a, "non_blocking"_a = false,
        "Copy a contiguous uint8 host array into the buffer at `offset`; non-blocking copies "
        "keep the array alive until they are done.");
  m.def("read", &read_bytes, "dst"_a, "src"_a, "offset"_a,
        "Fill a contiguous, writable uint8 host array from the buffer at `offset` (blocking).");
  m.def("copy", &copy, "dst"_a, "dst_offset"_a, "src"_a, "src_offset"_a, "nbytes"_a,
        nb::call_guard<nb::gil_scoped_release>(), "Copy bytes between two buffers.");

  // -- programs and kernels ------------------------------------------------------------------
  nb::class_<Program>(m, "Program", "An OpenCL program built for one device.")
      .def("__init__",
           [](Program* self, int device, const std::string& source, const std::string& options,
              nb::bytes binary) {
             const std::string cached(binary.c_str(), binary.size());
             nb::gil_scoped_release unlocked;  // builds take a while
             new (self) Program(device, source, options, cached);
           },
           "device"_a, "source"_a, "options"_a = "", "binary"_a = nb::bytes(""))
      .def("binary", [](const Program& p) {
        const std::string b = p.binary();
        return nb::bytes(b.data(), b.size());
      })
      .def_prop_ro("from_binary", &Program::from_binary)
      .def_prop_ro("device", &Program::device);
  nb::class_<BoundKernel>(m, "Kernel", "One kernel of a program and its argument types.")
      .def("__init__",
           [](BoundKernel* self, std::shared_ptr<Program> program, const std::string& name,
              const std::string& signature) {
             auto kernel = std::make_shared<Kernel>(std::move(program), name);
             std::string letters = unpack_signature(signature, *kernel);
             new (self) BoundKernel{std::move(kernel), std::move(letters)};
           },
           "program"_a, "name"_a, "signature"_a)
      .def_prop_ro("name", [](const BoundKernel& k) { return k.kernel->name(); })
      .def_prop_ro("signature", [](const BoundKernel& k) { return k.signature; })
      .def("__call__", &launch, "global_size"_a, "local_size"_a.none(), "args"_a,
           "Enqueue the kernel (no wait): global and local sizes, then its arguments.");

  // -- the fast path --------------------------------------------------------------------------
  nb::class_<PreparedLaunch>(m, "Launch",
                             "A kernel launch prepared for one call signature: called with "
                             "the inputs' addresses, it allocates the output and enqueues.")
      .def("__init__",
           [](PreparedLaunch* self, const BoundKernel& kernel, nb::list slots, unsigned inputs,
              std::vector<size_t> global, std::vector<size_t> local, size_t per_item,
              size_t numel, size_t out_nbytes, nb::object calls, nb::str name) {
             if (inputs > 8) throw nb::value_error("a prepared launch takes at most 8 inputs");
             if (global.size() > 3 || (!global.empty() && !local.empty() &&
                                       local.size() != global.size()) ||
                 (global.empty() && local.size() > 1)) {
               throw nb::value_error("bad launch sizes");
             }
             if (!PyDict_Check(calls.ptr())) throw nb::type_error("calls must be a dict");
             std::vector<Slot> converted;
             for (nb::handle item : slots) converted.push_back(slot_of(item));
             if (converted.size() != kernel.signature.size()) {
               throw nb::value_error(("kernel " + kernel.kernel->name() + " takes " +
                                      std::to_string(kernel.signature.size()) +
                                      " arguments, the launch describes " +
                                      std::to_string(converted.size())).c_str());
             }
             new (self) PreparedLaunch{Launch(kernel.kernel, std::move(converted), inputs,
                                              std::move(global), std::move(local), per_item),
                                       numel, out_nbytes, std::move(calls), std::move(name)};
           },
           "kernel"_a, "slots"_a, "inputs"_a, "global_size"_a, "local_size"_a, "per_item"_a,
           "numel"_a, "out_nbytes"_a, "calls"_a, "name"_a)
      .def_prop_ro("inputs", [](const PreparedLaunch& p) { return p.launch.inputs(); })
      .def("__call__", &call_prepared, "addresses"_a,
           "Run on the inputs at these addresses: the new output Buffer, or None when an "
           "address is not a block of the launch's device.")
      .def("into", &run_into, "out"_a, "other"_a,
           "Run into the existing memory at `out`: `out = out <op> other` for a launch of two "
           "inputs (the first is `out` itself), `out = op(other)` for one; False, having "
           "enqueued nothing, when an address is not a block of the launch's device.")
      .def("write", &run_write, "out"_a, "addresses"_a,
           "Run on the inputs at these addresses into the existing memory at `out` (an out= "
           "result); False, having enqueued nothing, when an address is not a block of the "
           "launch's device.");
  m.def("locate", [](uint64_t address) -> nb::object {
    Location where;
    if (!locate(address, &where)) return nb::none();
    return nb::make_tuple(where.device, where.offset);
  }, "address"_a, "(device, byte offset in its block) of a stand-in address, or None.");
  nb::class_<FastEntries>(m, "FastEntries",
                          "core's FastPath entry points (binary, binary_scalar, unary), each "
                          "launch asked of `resolve(kind, op, dtype, device)` once.")
      .def(nb::init<nb::object>(), "resolve"_a)
      .def("binary", &FastEntries::binary, "op"_a, "dtype"_a, "nbytes"_a, "numel"_a, "a"_a,
           "b"_a)
      .def("binary_scalar", &FastEntries::binary_scalar, "op"_a, "dtype"_a, "nbytes"_a,
           "numel"_a, "a"_a, "scalar"_a, "reversed"_a)
      .def("unary", &FastEntries::unary, "op"_a, "dtype"_a, "nbytes"_a, "numel"_a, "a"_a)
      .def("sum_all", &FastEntries::sum_all, "dtype"_a, "itemsize"_a, "numel"_a, "a"_a);
  m.def("binary_plan", [](const PreparedLaunch* plan, uint64_t a, uint64_t b) -> nb::object {
    if (!plan) return nb::none();
    Location in[2];
    if (plan->launch.inputs() != 2 || !locate(a, &in[0]) || !locate(b, &in[1])) {
      return nb::none();
    }
    return run_prepared(*plan, in, plan->numel, plan->out_nbytes, 0.0);
  }, "plan"_a.none(), "a"_a, "b"_a, "Run a prepared broadcast binary launch (None: declined).");
}
