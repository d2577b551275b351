// The part of the OpenCL 1.2 API plait-backend-xpu uses, declared here and resolved at run time.
//
// The wheel links no OpenCL library and needs no OpenCL headers to build: the ICD loader
// (libOpenCL.so.1, OpenCL.dll, or macOS's OpenCL framework) is opened on the first call of
// load_api(), and each entry point below is looked up by name into one table. A machine
// without the loader gets the reason from load_api() instead of an import error.
//
// The types and constants are those of the OpenCL specification (their values are fixed by
// it: an ICD of any vendor agrees on them). Only what the runtime uses is declared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(_WIN32)
#define PLAIT_CL_CALL __stdcall
#else
#define PLAIT_CL_CALL
#endif

namespace plait::xpu::cl {

// -- types (cl_platform.h / cl.h) ------------------------------------------------------------
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_device_type = cl_bitfield;
using cl_mem_flags = cl_bitfield;
using cl_command_queue_properties = cl_bitfield;
using cl_device_fp_config = cl_bitfield;
using cl_context_properties = intptr_t;
using cl_info = cl_uint;  // every *_info enum of the API is a cl_uint

using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

// -- constants ----------------------------------------------------------------------------------
constexpr cl_bool kTrue = 1;
constexpr cl_bool kFalse = 0;

constexpr cl_int kSuccess = 0;
constexpr cl_int kDeviceNotFound = -1;
constexpr cl_int kMemObjectAllocationFailure = -4;
constexpr cl_int kOutOfResources = -5;
constexpr cl_int kOutOfHostMemory = -6;
constexpr cl_int kBuildProgramFailure = -11;
constexpr cl_int kInvalidBinary = -42;
constexpr cl_int kPlatformNotFoundKhr = -1001;  // cl_khr_icd: the loader found no vendor

constexpr cl_info kPlatformVersion = 0x0901;
constexpr cl_info kPlatformName = 0x0902;
constexpr cl_info kPlatformVendor = 0x0903;

constexpr cl_device_type kDeviceTypeCpu = 1 << 1;
constexpr cl_device_type kDeviceTypeGpu = 1 << 2;
constexpr cl_device_type kDeviceTypeAccelerator = 1 << 3;
constexpr cl_device_type kDeviceTypeAll = 0xFFFFFFFF;

constexpr cl_info kDeviceType = 0x1000;
constexpr cl_info kDeviceMaxComputeUnits = 0x1002;
constexpr cl_info kDeviceMaxWorkGroupSize = 0x1004;
constexpr cl_info kDeviceMaxClockFrequency = 0x100C;
constexpr cl_info kDeviceMaxMemAllocSize = 0x1010;
constexpr cl_info kDeviceGlobalMemCacheSize = 0x101E;
constexpr cl_info kDeviceGlobalMemSize = 0x101F;
constexpr cl_info kDeviceLocalMemSize = 0x1023;
constexpr cl_info kDeviceName = 0x102B;
constexpr cl_info kDeviceVendor = 0x102C;
constexpr cl_info kDriverVersion = 0x102D;
constexpr cl_info kDeviceVersion = 0x102F;
constexpr cl_info kDeviceExtensions = 0x1030;
constexpr cl_info kDeviceDoubleFpConfig = 0x1032;
constexpr cl_info kDeviceOpenclCVersion = 0x103D;

constexpr cl_context_properties kContextPlatform = 0x1084;
constexpr cl_command_queue_properties kQueueProfilingEnable = 1 << 1;
constexpr cl_mem_flags kMemReadWrite = 1 << 0;

constexpr cl_info kProgramBinarySizes = 0x1165;
constexpr cl_info kProgramBinaries = 0x1166;
constexpr cl_info kProgramBuildLog = 0x1183;
constexpr cl_info kEventCommandExecutionStatus = 0x11D3;
constexpr cl_int kComplete = 0;
constexpr cl_info kProfilingCommandStart = 0x1282;
constexpr cl_info kProfilingCommandEnd = 0x1283;

// -- the entry points ------------------------------------------------------------------------
using ContextNotify = void(PLAIT_CL_CALL*)(const char*, const void*, size_t, void*);
using BuildNotify = void(PLAIT_CL_CALL*)(cl_program, void*);

// One row per entry point: X(name, return type, parameter list). The table below and the
// loader (cl_api.cpp) are both made from it, so a name is written once.
#define PLAIT_CL_ENTRY_POINTS(X)                                                              \
  X(clGetPlatformIDs, cl_int, (cl_uint, cl_platform_id*, cl_uint*))                           \
  X(clGetPlatformInfo, cl_int, (cl_platform_id, cl_info, size_t, void*, size_t*))             \
  X(clGetDeviceIDs, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id*,          \
                             cl_uint*))                                                        \
  X(clGetDeviceInfo, cl_int, (cl_device_id, cl_info, size_t, void*, size_t*))                 \
  X(clCreateContext, cl_context, (const cl_context_properties*, cl_uint, const cl_device_id*, \
                                  ContextNotify, void*, cl_int*))                             \
  X(clReleaseContext, cl_int, (cl_context))                                                   \
  X(clCreateCommandQueue, cl_command_queue, (cl_context, cl_device_id,                        \
                                             cl_command_queue_properties, cl_int*))           \
  X(clReleaseCommandQueue, cl_int, (cl_command_queue))                                        \
  X(clCreateBuffer, cl_mem, (cl_context, cl_mem_flags, size_t, void*, cl_int*))               \
  X(clReleaseMemObject, cl_int, (cl_mem))                                                     \
  X(clEnqueueWriteBuffer, cl_int, (cl_command_queue, cl_mem, cl_bool, size_t, size_t,         \
                                   const void*, cl_uint, const cl_event*, cl_event*))         \
  X(clEnqueueReadBuffer, cl_int, (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*,   \
                                  cl_uint, const cl_event*, cl_event*))                       \
  X(clEnqueueCopyBuffer, cl_int, (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t,   \
                                  cl_uint, const cl_event*, cl_event*))                       \
  X(clFlush, cl_int, (cl_command_queue))                                                      \
  X(clFinish, cl_int, (cl_command_queue))                                                     \
  X(clCreateProgramWithSource, cl_program, (cl_context, cl_uint, const char**, const size_t*, \
                                            cl_int*))                                         \
  X(clCreateProgramWithBinary, cl_program, (cl_context, cl_uint, const cl_device_id*,         \
                                            const size_t*, const unsigned char**, cl_int*,    \
                                            cl_int*))                                         \
  X(clBuildProgram, cl_int, (cl_program, cl_uint, const cl_device_id*, const char*,           \
                             BuildNotify, void*))                                             \
  X(clGetProgramInfo, cl_int, (cl_program, cl_info, size_t, void*, size_t*))                  \
  X(clGetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_info, size_t, void*,         \
                                    size_t*))                                                 \
  X(clReleaseProgram, cl_int, (cl_program))                                                   \
  X(clCreateKernel, cl_kernel, (cl_program, const char*, cl_int*))                            \
  X(clReleaseKernel, cl_int, (cl_kernel))                                                     \
  X(clSetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void*))                        \
  X(clEnqueueNDRangeKernel, cl_int, (cl_command_queue, cl_kernel, cl_uint, const size_t*,     \
                                     const size_t*, const size_t*, cl_uint, const cl_event*,  \
                                     cl_event*))                                              \
  X(clWaitForEvents, cl_int, (cl_uint, const cl_event*))                                      \
  X(clGetEventInfo, cl_int, (cl_event, cl_info, size_t, void*, size_t*))                      \
  X(clGetEventProfilingInfo, cl_int, (cl_event, cl_info, size_t, void*, size_t*))             \
  X(clReleaseEvent, cl_int, (cl_event))                                                       \
  X(clCreateUserEvent, cl_event, (cl_context, cl_int*))                                       \
  X(clSetUserEventStatus, cl_int, (cl_event, cl_int))

struct Api {
#define PLAIT_CL_FIELD(name, ret, params) ret(PLAIT_CL_CALL* name) params = nullptr;
  PLAIT_CL_ENTRY_POINTS(PLAIT_CL_FIELD)
#undef PLAIT_CL_FIELD
};

// The table, loaded on the first call (thread-safe); nullptr when the loader or an entry point
// is missing, with `error` saying which. Later calls give the same answer.
const Api* load_api(std::string* error);

// The loaded table; throws Error when it cannot be loaded.
const Api& api();

// The path or name the loader was opened from ("" before a successful load_api()).
std::string library_name();

// An OpenCL call that failed: its message names the call and the error (CL_OUT_OF_RESOURCES).
class Error : public std::runtime_error {
 public:
  Error(const std::string& call, cl_int code);
  cl_int code() const noexcept { return code_; }

 private:
  cl_int code_;
};

// The specification's name of an error code ("CL_INVALID_VALUE"), or "OpenCL error <n>".
std::string error_name(cl_int code);

// Throws Error(call, code) unless code is kSuccess.
inline void check(cl_int code, const char* call) {
  if (code != kSuccess) throw Error(call, code);
}

}  // namespace plait::xpu::cl
