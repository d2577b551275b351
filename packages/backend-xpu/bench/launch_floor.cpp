// The floor under a small xpu op: what one kernel launch costs in the OpenCL driver alone.
//
// A 4-float add kernel is launched N times the way plait-backend-xpu launches it (seven
// clSetKernelArg calls, then clEnqueueNDRangeKernel over one work-group of 256), on a queue
// with or without profiling, and either straight to the device or behind a user event that
// opens every `batch` launches (the backend's gate on CPU devices, devices.h). It prints the
// host time per launch and the time per launch with the queue drained (wall clock), and the
// CPU time per launch of the calling thread and of the whole process (PoCL's worker threads
// included), which a loaded machine disturbs less.
//
// Not part of the wheel (it needs OpenCL's headers and links the ICD loader):
//   g++ -O2 -o launch_floor launch_floor.cpp -lOpenCL
//   ./launch_floor            # every combination, the first device of the first platform
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace {

const char* kSource =
    "__kernel void add(__global float* o, __global const float* a, __global const float* b,"
    " long n, long oo, long ao, long bo) {"
    "  long i = get_global_id(0); if (i < n) o[oo + i] = a[ao + i] + b[bo + i]; }";
constexpr int kLaunches = 20000;
constexpr int kRepeats = 7;

using Clock = std::chrono::steady_clock;

double per_launch(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count() / kLaunches;
}

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void measure(cl_context context, cl_device_id device, cl_program program, bool profiling,
             int batch) {
  cl_int err = CL_SUCCESS;
  cl_command_queue queue =
      clCreateCommandQueue(context, device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  cl_kernel kernel = clCreateKernel(program, "add", &err);
  cl_mem buffers[3];
  for (cl_mem& b : buffers) b = clCreateBuffer(context, CL_MEM_READ_WRITE, 512, nullptr, &err);
  const cl_long n = 4, zero = 0;
  const size_t global = 256, local = 256;
  auto set_args = [&] {
    for (cl_uint k = 0; k < 3; ++k) clSetKernelArg(kernel, k, sizeof(cl_mem), &buffers[k]);
    clSetKernelArg(kernel, 3, sizeof(n), &n);
    for (cl_uint k = 4; k < 7; ++k) clSetKernelArg(kernel, k, sizeof(zero), &zero);
  };
  set_args();  // the first launch compiles the work-group function: not timed
  clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  clFinish(queue);
  double host = 1e9, drained = 1e9, thread_cpu = 1e9, process_cpu = 1e9;
  for (int r = 0; r < kRepeats; ++r) {
    const double thread_start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const double process_start = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    const Clock::time_point start = Clock::now();
    cl_event gate = nullptr;
    int held = 0;
    for (int i = 0; i < kLaunches; ++i) {
      set_args();
      const cl_event* wait = nullptr;
      if (batch && !gate) {
        gate = clCreateUserEvent(context, &err);
        wait = &gate;
      }
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, wait ? 1 : 0, wait,
                             nullptr);
      if (batch && ++held >= batch) {
        clSetUserEventStatus(gate, CL_COMPLETE);
        clReleaseEvent(gate);
        gate = nullptr;
        held = 0;
        clFlush(queue);
      }
    }
    if (gate) {
      clSetUserEventStatus(gate, CL_COMPLETE);
      clReleaseEvent(gate);
    }
    const Clock::time_point queued = Clock::now();
    const double thread_end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    clFinish(queue);
    host = std::min(host, per_launch(queued - start));
    drained = std::min(drained, per_launch(Clock::now() - start));
    thread_cpu = std::min(thread_cpu, (thread_end - thread_start) * 1e6 / kLaunches);
    process_cpu = std::min(process_cpu,
                           (cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process_start) * 1e6 /
                               kLaunches);
  }
  std::printf("profiling %-3s gate %-4d | wall: host %5.2f drained %5.2f | cpu: thread %5.2f "
              "process %5.2f (us/launch)\n",
              profiling ? "on" : "off", batch, host, drained, thread_cpu, process_cpu);
  for (cl_mem b : buffers) clReleaseMemObject(b);
  clReleaseKernel(kernel);
  clReleaseCommandQueue(queue);
}

}  // namespace

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    std::fprintf(stderr, "no OpenCL device\n");
    return 1;
  }
  char name[256] = {0};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  std::printf("%s: %d launches of a 4-float add, best of %d\n", name, kLaunches, kRepeats);
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
  if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
    std::fprintf(stderr, "build failed\n");
    return 1;
  }
  for (bool profiling : {true, false}) {
    for (int batch : {0, 64, 256}) measure(context, device, program, profiling, batch);
  }
  clReleaseProgram(program);
  clReleaseContext(context);
  return 0;
}
