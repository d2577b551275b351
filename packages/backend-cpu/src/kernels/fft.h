// One-dimensional discrete Fourier transforms of many signals at once: the `fft_c2c`,
// `fft_r2c` and `fft_c2r` primitives along one dimension (plait_backend_cpu/kernels/spectral.py
// declines the other cases to core's reference kernel).
//
// Lengths whose prime factors are 2, 3 and 5 only; any other length returns kFftUnsupported
// and the reference runs. Signals are laid out by strides (in elements of their own type:
// complex values count once), so the kernel reads strided frames and writes transposed
// spectra without a copy. Batches of signals are transformed side by side, one signal per
// vector lane (Stockham's self-sorting algorithm, radix 4, 2, 3 and 5), and split over the
// worker threads; each signal's result is independent of the thread count and of its
// neighbours.
#pragma once

#include <cstdint>
#include <vector>

namespace plait::cpu {

inline constexpr int kFftOk = 0;
inline constexpr int kFftUnsupported = 1;

// The kind of transform: complex to complex, real to complex (the first `out_length`
// frequencies), onesided Hermitian complex to real.
enum class FftKind : int { kC2C = 0, kR2C = 1, kC2R = 2 };

struct FftCall {
  FftKind kind;
  bool double_precision;   // float64/complex128, else float32/complex64
  bool forward;            // the sign of the exponent: forward e^{-2 pi i jk/n}
  int64_t length;          // n, the signal length (for c2r: the real output's length)
  int64_t in_length;       // values read per signal (c2r: n / 2 + 1; else n)
  int64_t out_length;      // values written per signal
  double scale;            // multiplies every output value
  uintptr_t in;            // data pointers, offsets applied
  uintptr_t out;
  int64_t in_stride;       // along the transformed dimension
  int64_t out_stride;
  std::vector<int64_t> batch_shape;  // the other dimensions, the same for input and output
  std::vector<int64_t> in_batch_strides;
  std::vector<int64_t> out_batch_strides;
};

// kFftOk, or kFftUnsupported with nothing written.
int fft_run(const FftCall& call);

// True when `n` (>= 1) factors into 2, 3 and 5.
bool fft_length_supported(int64_t n);

}  // namespace plait::cpu
