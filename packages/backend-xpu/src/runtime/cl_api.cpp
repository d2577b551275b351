// Opens the OpenCL ICD loader at run time and resolves cl_api.h's entry points.
#include "cl_api.h"

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace plait::xpu::cl {
namespace {

// Where the loader is looked for, in order. PLAIT_XPU_OPENCL_LIBRARY, when set, replaces the
// list (a vendor's libOpenCL outside the search path, or a missing one to test that path).
std::vector<std::string> candidates() {
  if (const char* chosen = std::getenv("PLAIT_XPU_OPENCL_LIBRARY"); chosen && *chosen) {
    return {chosen};
  }
#if defined(_WIN32)
  return {"OpenCL.dll"};
#elif defined(__APPLE__)
  return {"/System/Library/Frameworks/OpenCL.framework/OpenCL", "libOpenCL.dylib"};
#else
  // The versioned name first: the unversioned one exists only with the -dev package.
  return {"libOpenCL.so.1", "libOpenCL.so"};
#endif
}

#if defined(_WIN32)
void* open_library(const std::string& name, std::string* why) {
  HMODULE handle = LoadLibraryA(name.c_str());
  if (!handle) *why = "LoadLibrary failed with error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(handle);
}
void* symbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}
#else
void* open_library(const std::string& name, std::string* why) {
  // RTLD_LOCAL: the loader's symbols stay out of the global namespace of the process.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* text = dlerror();
    *why = text ? text : "dlopen failed";
  }
  return handle;
}
void* symbol(void* library, const char* name) { return dlsym(library, name); }
#endif

struct Loaded {
  Api api;
  bool ok = false;
  std::string error;
  std::string library;
};

Loaded load() {
  Loaded out;
  std::string tried;
  void* library = nullptr;
  for (const std::string& name : candidates()) {
    std::string why;
    library = open_library(name, &why);
    if (library) {
      out.library = name;
      break;
    }
    tried += (tried.empty() ? "" : "; ") + why;
  }
  if (!library) {
    out.error = "the OpenCL ICD loader could not be opened (" + tried +
                "): install one (Debian: ocl-icd-libopencl1) and an OpenCL driver (pocl-opencl-icd "
                "for a CPU device), or point PLAIT_XPU_OPENCL_LIBRARY at libOpenCL";
    return out;
  }
  // The library stays open for the life of the process: kernels and buffers outlive any scope.
#define PLAIT_CL_RESOLVE(name, ret, params)                                                 \
  out.api.name = reinterpret_cast<ret(PLAIT_CL_CALL*) params>(symbol(library, #name));      \
  if (!out.api.name) {                                                                       \
    out.error = out.library + " has no " #name ": an OpenCL 1.2 loader is required";        \
    return out;                                                                              \
  }
  PLAIT_CL_ENTRY_POINTS(PLAIT_CL_RESOLVE)
#undef PLAIT_CL_RESOLVE
  out.ok = true;
  return out;
}

const Loaded& loaded() {
  static const Loaded instance = load();  // thread-safe once (C++11 statics)
  return instance;
}

// The specification's names of the codes a user is likely to see.
constexpr std::pair<cl_int, const char*> kErrorNames[] = {
    {0, "CL_SUCCESS"},
    {-1, "CL_DEVICE_NOT_FOUND"},
    {-2, "CL_DEVICE_NOT_AVAILABLE"},
    {-3, "CL_COMPILER_NOT_AVAILABLE"},
    {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {-5, "CL_OUT_OF_RESOURCES"},
    {-6, "CL_OUT_OF_HOST_MEMORY"},
    {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"},
    {-8, "CL_MEM_COPY_OVERLAP"},
    {-11, "CL_BUILD_PROGRAM_FAILURE"},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
    {-30, "CL_INVALID_VALUE"},
    {-32, "CL_INVALID_PLATFORM"},
    {-33, "CL_INVALID_DEVICE"},
    {-34, "CL_INVALID_CONTEXT"},
    {-36, "CL_INVALID_COMMAND_QUEUE"},
    {-38, "CL_INVALID_MEM_OBJECT"},
    {-42, "CL_INVALID_BINARY"},
    {-43, "CL_INVALID_BUILD_OPTIONS"},
    {-44, "CL_INVALID_PROGRAM"},
    {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
    {-46, "CL_INVALID_KERNEL_NAME"},
    {-48, "CL_INVALID_KERNEL"},
    {-49, "CL_INVALID_ARG_INDEX"},
    {-50, "CL_INVALID_ARG_VALUE"},
    {-51, "CL_INVALID_ARG_SIZE"},
    {-52, "CL_INVALID_KERNEL_ARGS"},
    {-53, "CL_INVALID_WORK_DIMENSION"},
    {-54, "CL_INVALID_WORK_GROUP_SIZE"},
    {-55, "CL_INVALID_WORK_ITEM_SIZE"},
    {-56, "CL_INVALID_GLOBAL_OFFSET"},
    {-58, "CL_INVALID_EVENT"},
    {-61, "CL_INVALID_BUFFER_SIZE"},
    {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
};

}  // namespace

const Api* load_api(std::string* error) {
  const Loaded& l = loaded();
  if (!l.ok && error) *error = l.error;
  return l.ok ? &l.api : nullptr;
}

const Api& api() {
  std::string error;
  const Api* table = load_api(&error);
  if (!table) throw std::runtime_error(error);
  return *table;
}

std::string library_name() { return loaded().ok ? loaded().library : ""; }

std::string error_name(cl_int code) {
  for (const auto& [value, name] : kErrorNames) {
    if (value == code) return name;
  }
  return "OpenCL error " + std::to_string(code);
}

Error::Error(const std::string& call, cl_int code)
    : std::runtime_error(call + " failed: " + error_name(code)), code_(code) {}

}  // namespace plait::xpu::cl
