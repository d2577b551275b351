// Convolution as im2col / col2im + GEMM, a direct kernel for small 2-d float ones, and an
// exact wrapping product for the integer dtypes (see conv.h for the image/grid view).
#include "conv.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "blas.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace plait::cpu {
namespace {

// Column buffers hold at most this many elements per thread (the columns are tiled beyond).
constexpr int64_t kColumnBudget = int64_t{1} << 21;
// Weight-gradient partial sums: at most this many blocks over the batch, and this many
// elements of partials in all. Block counts depend on shapes only, never on thread counts.
constexpr int64_t kMaxGradBlocks = 8;
constexpr int64_t kPartialBudget = int64_t{1} << 24;
// Below this many multiply-adds per chunk, a thread costs more than it saves.
constexpr int64_t kConvGrain = int64_t{1} << 17;
// Spatial dimensions handled natively (more run the reference kernel).
constexpr int kMaxConvDims = 16;

// The convolution seen from its image side (positions the kernel covers) and grid side
// (kernel placements), per sample and group; every buffer is contiguous.
struct Geometry {
  int nd = 0;
  int64_t batch = 0, groups = 1;
  int64_t img_channels = 0, grid_channels = 0;  // per group
  Dims img, grid, kernel, stride, pad, dil, img_strides;
  int64_t img_numel = 1, grid_numel = 1, kernel_numel = 1;

  int64_t rows() const { return img_channels * kernel_numel; }  // of a column buffer
  int64_t img_item() const { return img_channels * img_numel; }
  int64_t grid_item() const { return grid_channels * grid_numel; }
  int64_t weight_group() const { return grid_channels * rows(); }
  // A 1x1 kernel at stride 1 without padding over equal sizes: im2col is the identity.
  bool identity() const {
    if (img != grid) return false;
    for (int d = 0; d < nd; ++d) {
      if (kernel[d] != 1 || stride[d] != 1 || pad[d] != 0) return false;
    }
    return true;
  }
};

[[noreturn]] void shape_error(const char* what) {
  throw std::invalid_argument(std::string("plait_backend_cpu convolution: ") + what);
}

// Shapes of (input, weight, out) of the forward convolution, checked and seen from its sides.
Geometry make_geometry(const Dims& in_shape, const Dims& w_shape, const Dims& out_shape,
                       const ConvParams& p) {
  const size_t rank = w_shape.size();
  if (rank < 3 || in_shape.size() != rank || out_shape.size() != rank) {
    shape_error("input, weight and output need the same rank >= 3");
  }
  const size_t nd = rank - 2;
  if (nd > static_cast<size_t>(kMaxConvDims)) shape_error("more than 16 spatial dimensions");
  if (p.stride.size() != nd || p.padding.size() != nd || p.dilation.size() != nd) {
    shape_error("stride, padding and dilation need one value per spatial dimension");
  }
  if (p.groups < 1 || w_shape[0] % p.groups) shape_error("groups must divide weight.size(0)");
  for (size_t d = 0; d < nd; ++d) {
    if (p.stride[d] < 1 || p.dilation[d] < 1 || p.padding[d] < 0) {
      shape_error("stride and dilation must be positive and padding non-negative");
    }
  }
  for (int64_t s : in_shape) if (s < 0) shape_error("negative size");
  for (int64_t s : out_shape) if (s < 0) shape_error("negative size");
  for (int64_t s : w_shape) if (s < 0) shape_error("negative size");
  Geometry g;
  g.nd = static_cast<int>(nd);
  g.groups = p.groups;
  g.batch = in_shape[0];
  if (out_shape[0] != g.batch) shape_error("input and output batch sizes differ");
  const Dims in_sp(in_shape.begin() + 2, in_shape.end());
  const Dims out_sp(out_shape.begin() + 2, out_shape.end());
  g.kernel.assign(w_shape.begin() + 2, w_shape.end());
  if (!p.transposed) {  // weight (G*Co, Ci, *K): image = input, grid = out
    g.grid_channels = w_shape[0] / p.groups;
    g.img_channels = w_shape[1];
    if (in_shape[1] != g.img_channels * p.groups || out_shape[1] != w_shape[0]) {
      shape_error("channels of input, weight and output do not match");
    }
    g.img = in_sp;
    g.grid = out_sp;
  } else {  // weight (G*Ci, Co, *K): image = out, grid = input
    g.grid_channels = w_shape[0] / p.groups;
    g.img_channels = w_shape[1];
    if (in_shape[1] != w_shape[0] || out_shape[1] != g.img_channels * p.groups) {
      shape_error("channels of input, weight and output do not match");
    }
    g.img = out_sp;
    g.grid = in_sp;
  }
  g.stride = p.stride;
  g.pad = p.padding;
  g.dil = p.dilation;
  g.img_numel = numel(g.img);
  g.grid_numel = numel(g.grid);
  g.kernel_numel = numel(g.kernel);
  g.img_strides.assign(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) g.img_strides[d] = g.img_strides[d + 1] * g.img[d + 1];
  return g;
}

// Walks the columns [p0, p1) of one column-buffer row (channel c, kernel offset k) line by
// line along the last grid dimension, calling `line(img_offset, t_lo, t_hi, len)`: grid
// positions t in [t_lo, t_hi) of the line read image element img_offset + t * stride_last,
// the others fall outside the image (padding). img_offset < 0 marks a line entirely outside.
template <class F>
void walk_row(const Geometry& g, const int64_t* k, int64_t p0, int64_t p1, const F& line) {
  const int last = g.nd - 1;
  const int64_t gl = g.grid[last], il = g.img[last], s = g.stride[last];
  const int64_t k_shift = k[last] * g.dil[last] - g.pad[last];
  // image position of grid position j + t is base + t * s, inside for t in [lo, hi)
  auto bounds = [&](int64_t j, int64_t len, int64_t& lo, int64_t& hi) {
    const int64_t base = j * s + k_shift;
    lo = std::min(base >= 0 ? 0 : (-base + s - 1) / s, len);
    hi = std::max(std::min(base >= il ? 0 : (il - base + s - 1) / s, len), lo);
    return base;
  };
  int64_t full_lo = 0, full_hi = 0;
  const int64_t full_base = bounds(0, gl, full_lo, full_hi);
  // grid coordinates of the current line (all dims but the last), advanced like an odometer
  std::array<int64_t, kMaxConvDims> y{};
  int64_t j = p0 % gl;
  int64_t outer = p0 / gl;
  for (int d = last - 1; d >= 0; --d) {
    y[d] = outer % g.grid[d];
    outer /= g.grid[d];
  }
  for (int64_t p = p0; p < p1;) {
    const int64_t len = std::min(gl - j, p1 - p);
    int64_t offset = 0;
    bool inside = true;
    for (int d = 0; d < last; ++d) {
      const int64_t pos = y[d] * g.stride[d] - g.pad[d] + k[d] * g.dil[d];
      if (pos < 0 || pos >= g.img[d]) {
        inside = false;
        break;
      }
      offset += pos * g.img_strides[d];
    }
    if (!inside) {
      line(int64_t{-1}, int64_t{0}, int64_t{0}, len);
    } else if (j == 0 && len == gl) {
      line(offset + full_base, full_lo, full_hi, len);
    } else {
      int64_t lo = 0, hi = 0;
      const int64_t base = bounds(j, len, lo, hi);
      line(offset + base, lo, hi, len);
    }
    p += len;
    j = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++y[d] < g.grid[d]) break;
      y[d] = 0;
    }
  }
}

// The hot unit-stride loops, compiled per ISA level.
template <class T>
PLAIT_CLONES void accumulate(T* __restrict dst, const T* __restrict src, int64_t n) {
  for (int64_t t = 0; t < n; ++t) dst[t] += src[t];
}

template <class S, class T>
PLAIT_CLONES void widen(T* __restrict dst, const S* __restrict src, int64_t n) {
  for (int64_t t = 0; t < n; ++t) dst[t] = static_cast<T>(src[t]);
}

template <class S, class T>
PLAIT_CLONES void round_into(S* __restrict dst, const T* __restrict src, int64_t n) {
  for (int64_t t = 0; t < n; ++t) dst[t] = S::from_float(src[t]);
}

// An unsigned compute value back into the integer storage type S, keeping the low bits (the
// wrap-around PyTorch's integer convolution has); memcpy, not a cast, turns the unsigned
// bits into a signed value without implementation-defined behaviour.
template <class S, class T>
PLAIT_CLONES void wrap_into(S* __restrict dst, const T* __restrict src, int64_t n) {
  using U = std::make_unsigned_t<S>;
  for (int64_t t = 0; t < n; ++t) {
    const U bits = static_cast<U>(src[t]);
    std::memcpy(dst + t, &bits, sizeof(S));
  }
}

// Integer products in the unsigned type T (wrapping), row-major like blas::gemm with alpha 1
// and beta 0 or 1; unit-stride inner loops the compiler vectorises.
template <class T>
PLAIT_CLONES void int_axpy(T* __restrict c, const T* __restrict b, T a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) c[j] += a * b[j];
}

template <class T>
PLAIT_CLONES T int_dot(const T* __restrict a, const T* __restrict b, int64_t n) {
  T total = 0;
  for (int64_t j = 0; j < n; ++j) total += a[j] * b[j];
  return total;
}

template <class T>
void int_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
              int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) std::fill(row, row + n, T(0));
    if (trans_b) {  // B stored (n, k): each entry one dot product
      const T* arow = a + i * lda;  // (trans_a with trans_b is never used here)
      for (int64_t j = 0; j < n; ++j) row[j] += int_dot(arow, b + j * ldb, k);
    } else {
      for (int64_t kk = 0; kk < k; ++kk) {
        const T av = trans_a ? a[kk * lda + i] : a[i * lda + kk];
        if (av != T(0)) int_axpy(row, b + kk * ldb, av, n);
      }
    }
  }
}

// The products of this file: OpenBLAS (or its native fallback) for the float types, the
// wrapping integer kernel above for the unsigned compute types of the integer dtypes.
template <class T>
void mm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
        const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_floating_point_v<T>) {
    blas::gemm(trans_a, trans_b, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  } else {
    int_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
}

void kernel_offset(const Geometry& g, int64_t kk, int64_t* k) {
  for (int d = g.nd - 1; d >= 0; --d) {
    k[d] = kk % g.kernel[d];
    kk /= g.kernel[d];
  }
}

// Runs of an image line (a few dozen elements) copied or zeroed in fixed 64-byte (then
// 16-byte) moves, the last one overlapping the one before, instead of a memcpy/memset call
// each: with im2col writing 64-column B panels, those calls and their setup took more time
// than the copying (a third of the (32, 64, 56, 56) 3x3 forward).
// Hides a loop's counter from the compiler, which would otherwise turn the loops below back
// into the memcpy/memset calls they replace.
inline void opaque(int64_t& i) {
#if defined(__GNUC__)
  asm("" : "+r"(i));
#else
  (void)i;
#endif
}

template <class T>
inline void copy_run(T* __restrict dst, const T* __restrict src, int64_t n) {
  const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
  auto* d = reinterpret_cast<unsigned char*>(dst);
  const auto* s = reinterpret_cast<const unsigned char*>(src);
  const int64_t step = bytes >= 64 ? 64 : 16;
  if (bytes < 16) {
    for (int64_t t = 0; t < n; ++t, opaque(t)) dst[t] = src[t];
    return;
  }
  int64_t i = 0;
  if (step == 64) {
    for (; i + 64 <= bytes; i += 64, opaque(i)) std::memcpy(d + i, s + i, 64);
    if (i < bytes) std::memcpy(d + bytes - 64, s + bytes - 64, 64);
  } else {
    for (; i + 16 <= bytes; i += 16, opaque(i)) std::memcpy(d + i, s + i, 16);
    if (i < bytes) std::memcpy(d + bytes - 16, s + bytes - 16, 16);
  }
}

template <class T>
inline void zero_run(T* dst, int64_t n) {
  const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
  auto* d = reinterpret_cast<unsigned char*>(dst);
  if (bytes < 16) {
    for (int64_t t = 0; t < n; ++t, opaque(t)) dst[t] = T(0);
    return;
  }
  int64_t i = 0;
  if (bytes >= 64) {
    for (; i + 64 <= bytes; i += 64, opaque(i)) std::memset(d + i, 0, 64);
    if (i < bytes) std::memset(d + bytes - 64, 0, 64);
  } else {
    for (; i + 16 <= bytes; i += 16, opaque(i)) std::memset(d + i, 0, 16);
    if (i < bytes) std::memset(d + bytes - 16, 0, 16);
  }
}

// dst[t] = src[t * S] for t < n: stride 2 (common in small CNNs) gets a constant-stride loop
// the compiler vectorises, stride 1 a run of fixed-size moves.
template <class T, int S>
PLAIT_CLONES void gather_fixed(T* __restrict dst, const T* __restrict src, int64_t n) {
  for (int64_t t = 0; t < n; ++t) dst[t] = src[t * S];
}

template <class T>
void gather(T* __restrict dst, const T* __restrict src, int64_t n, int64_t s) {
  if (s == 1) {
    copy_run(dst, src, n);
  } else if (s == 2) {
    gather_fixed<T, 2>(dst, src, n);
  } else {
    for (int64_t t = 0; t < n; ++t) dst[t] = src[t * s];
  }
}

// Per kernel column kw of a 2-d convolution: its shift x_shift and the output columns ox in
// [lo, hi) that read image column ox * stride + x_shift (the rest is padding). im2col_2d and
// col2im_2d compute them once per call, not once per channel and kernel row: their two
// divisions by the stride cost about as much as copying the 64-column panel line they bound.
class ColumnBounds {
 public:
  explicit ColumnBounds(const Geometry& g) {
    const int64_t kw_count = g.kernel[1], ow = g.grid[1], iw = g.img[1], sw = g.stride[1];
    if (kw_count > kFixedColumns) {
      larger_.resize(static_cast<size_t>(3 * kw_count));
      bounds_ = larger_.data();
    }
    for (int64_t kw = 0; kw < kw_count; ++kw) {
      const int64_t x_shift = kw * g.dil[1] - g.pad[1];
      const int64_t lo = std::min(x_shift >= 0 ? 0 : (-x_shift + sw - 1) / sw, ow);
      bounds_[3 * kw] = x_shift;
      bounds_[3 * kw + 1] = lo;
      bounds_[3 * kw + 2] =
          std::max(std::min(x_shift >= iw ? 0 : (iw - x_shift + sw - 1) / sw, ow), lo);
    }
  }
  ColumnBounds(const ColumnBounds&) = delete;  // bounds_ may point into this object
  ColumnBounds& operator=(const ColumnBounds&) = delete;

  int64_t shift(int64_t kw) const { return bounds_[3 * kw]; }
  int64_t lo(int64_t kw) const { return bounds_[3 * kw + 1]; }
  int64_t hi(int64_t kw) const { return bounds_[3 * kw + 2]; }

 private:
  static constexpr int64_t kFixedColumns = 16;  // kernels up to this wide: no allocation
  int64_t fixed_[3 * kFixedColumns];
  std::vector<int64_t> larger_;
  int64_t* bounds_ = fixed_;
};

// im2col of a 2-d convolution: the general walk below with its per-line bookkeeping reduced
// to a few integer operations, which matters for the short lines (a dozen columns) of small
// images. The columns [p0, p1) go in panels of W (panel j at col + j * rows * W, kernel offset
// r at r * W within it): the packed float32 kernels' B panels, written straight from the
// image; W >= p1 - p0 is one panel, the plain layout with rows W apart. Each output line is
// cut at the panel edges in one pass over the tile (on AVX2 a panel is 16 columns, and im2col
// called panel by panel took 40% of a 3x3 convolution's forward). Columns past p1 in the last
// panel are left as they are.
template <class T>
PLAIT_CLONES void im2col_2d(const Geometry& g, const T* img, int64_t p0, int64_t p1, T* col,
                            int64_t W) {
  const int64_t OW = g.grid[1], IH = g.img[0], IW = g.img[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const int64_t panel_floats = g.rows() * W;
  const ColumnBounds columns(g);
  // the image lines the tile reads: while one channel's are copied, the next channel's are
  // fetched (they lie a channel apart, where the hardware's stream prefetch does not look)
  const int64_t first_line = std::max<int64_t>(0, p0 / OW * sh - g.pad[0]);
  const int64_t last_line =
      std::min<int64_t>(IH, (p1 - 1) / OW * sh + (KH - 1) * g.dil[0] - g.pad[0] + 1);
  const int64_t span = (last_line - first_line) * IW;  // elements, contiguous
  for (int64_t c = 0; c < g.img_channels; ++c) {
    const T* src = img + c * g.img_numel;
    if (c + 1 < g.img_channels) {
      const T* next = src + g.img_numel + first_line * IW;
      for (int64_t e = 0; e < span; e += 64 / static_cast<int64_t>(sizeof(T))) {
        __builtin_prefetch(next + e);
      }
    }
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t y_shift = kh * g.dil[0] - g.pad[0];
      for (int64_t kw = 0; kw < KW; ++kw) {
        T* row = col + ((c * KH + kh) * KW + kw) * W;
        const int64_t x_shift = columns.shift(kw), lo = columns.lo(kw), hi = columns.hi(kw);
        int64_t oy = p0 / OW, ox = p0 % OW;
        int64_t panel = 0, at = 0;  // where position p goes: panel `panel`, column `at`
        for (int64_t p = p0; p < p1; ++oy, ox = 0) {
          const int64_t end = std::min(OW, ox + (p1 - p));
          const int64_t iy = oy * sh + y_shift;
          const bool inside = iy >= 0 && iy < IH;
          // [ox, end) in pieces that each stay within one panel
          for (int64_t x = ox; x < end;) {
            const int64_t n = std::min(end - x, W - at);
            T* dst = row + panel * panel_floats + at;
            if (!inside) {
              zero_run(dst, n);
            } else {
              const int64_t a = std::min(std::max(x, lo), x + n);
              const int64_t b = std::max(std::min(x + n, hi), a);
              zero_run(dst, a - x);
              gather(dst + (a - x), src + iy * IW + a * sw + x_shift, b - a, sw);
              zero_run(dst + (b - x), x + n - b);
            }
            x += n;
            at += n;
            if (at == W) {
              at = 0;
              ++panel;
            }
          }
          p += end - ox;
        }
      }
    }
  }
}

// col[r * ld + p - p0] = image value under kernel offset r at grid position p (zero in
// padding); ld (>= p1 - p0) lets several samples' columns sit side by side.
template <class T>
void im2col(const Geometry& g, const T* img, int64_t p0, int64_t p1, T* col, int64_t ld) {
  if (g.nd == 2) {
    im2col_2d(g, img, p0, p1, col, ld);
    return;
  }
  const int64_t s = g.stride[g.nd - 1];
  std::vector<int64_t> k(g.nd);
  for (int64_t c = 0; c < g.img_channels; ++c) {
    const T* src = img + c * g.img_numel;
    for (int64_t kk = 0; kk < g.kernel_numel; ++kk) {
      kernel_offset(g, kk, k.data());
      T* dst = col + (c * g.kernel_numel + kk) * ld;
      walk_row(g, k.data(), p0, p1, [&](int64_t offset, int64_t lo, int64_t hi, int64_t len) {
        std::fill(dst, dst + lo, T(0));
        if (hi > lo) {
          const T* from = src + offset;
          if (s == 1) {
            std::memcpy(dst + lo, from + lo, static_cast<size_t>(hi - lo) * sizeof(T));
          } else {
            for (int64_t t = lo; t < hi; ++t) dst[t] = from[t * s];
          }
        }
        std::fill(dst + hi, dst + len, T(0));
        dst += len;
      });
    }
  }
}

// dst[t * S] += src[t] for t < n, with the strides col2im_2d specialises made constant.
template <class T, int S>
PLAIT_CLONES void scatter_add_fixed(T* __restrict dst, const T* __restrict src, int64_t n) {
  for (int64_t t = 0; t < n; ++t) dst[t * S] += src[t];
}

template <class T>
void scatter_add(T* __restrict dst, const T* __restrict src, int64_t n, int64_t s) {
  if (s == 1) {
    scatter_add_fixed<T, 1>(dst, src, n);
  } else if (s == 2) {
    scatter_add_fixed<T, 2>(dst, src, n);
  } else {
    for (int64_t t = 0; t < n; ++t) dst[t * s] += src[t];
  }
}

// col2im of a 2-d convolution: im2col_2d's loops with the copy turned into accumulation.
template <class T>
void col2im_2d(const Geometry& g, const T* col, int64_t p0, int64_t p1, T* img) {
  const int64_t width = p1 - p0;
  const int64_t OW = g.grid[1], IH = g.img[0], IW = g.img[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const ColumnBounds columns(g);
  for (int64_t c = 0; c < g.img_channels; ++c) {
    T* dst = img + c * g.img_numel;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t y_shift = kh * g.dil[0] - g.pad[0];
      for (int64_t kw = 0; kw < KW; ++kw) {
        const T* src = col + ((c * KH + kh) * KW + kw) * width;
        const int64_t x_shift = columns.shift(kw), lo = columns.lo(kw), hi = columns.hi(kw);
        int64_t oy = p0 / OW, ox = p0 % OW;
        for (int64_t p = p0; p < p1; ++oy, ox = 0) {
          const int64_t end = std::min(OW, ox + (p1 - p));
          const int64_t iy = oy * sh + y_shift;
          if (iy >= 0 && iy < IH) {
            // [ox, end) may end before lo (a tile that ends inside a line)
            const int64_t a = std::min(std::max(ox, lo), end);
            const int64_t b = std::max(std::min(end, hi), a);
            scatter_add(dst + iy * IW + a * sw + x_shift, src + (a - ox), b - a, sw);
          }
          src += end - ox;
          p += end - ox;
        }
      }
    }
  }
}

// The adjoint of im2col: image values under each kernel offset accumulate the column values.
template <class T>
void col2im(const Geometry& g, const T* col, int64_t p0, int64_t p1, T* img) {
  if (g.nd == 2) {
    col2im_2d(g, col, p0, p1, img);
    return;
  }
  const int64_t width = p1 - p0;
  const int64_t s = g.stride[g.nd - 1];
  std::vector<int64_t> k(g.nd);
  for (int64_t c = 0; c < g.img_channels; ++c) {
    T* dst = img + c * g.img_numel;
    for (int64_t kk = 0; kk < g.kernel_numel; ++kk) {
      kernel_offset(g, kk, k.data());
      const T* src = col + (c * g.kernel_numel + kk) * width;
      walk_row(g, k.data(), p0, p1, [&](int64_t offset, int64_t lo, int64_t hi, int64_t len) {
        if (hi > lo) {
          T* to = dst + offset;
          if (s == 1) {
            accumulate(to + lo, src + lo, hi - lo);
          } else {
            for (int64_t t = lo; t < hi; ++t) to[t * s] += src[t];
          }
        }
        src += len;
      });
    }
  }
}

int64_t column_tile(const Geometry& g, int64_t budget = kColumnBudget) {
  const int64_t rows = std::max<int64_t>(g.rows(), 1);
  return std::max<int64_t>(1, std::min(g.grid_numel, budget / rows));
}

// Column tiles on the packed float32 kernels (forward, and the input gradient's columns before
// col2im): a tile and its packed copy stay in L2 (the whole (576, 3136) column matrix of a
// 64-channel 3x3 layer on 56x56, 7 MiB, went out to L3 and back between im2col and the
// product: 0.7-0.8x the time with 1 MiB tiles), in whole B panels (multiples of
// blas::packed_panel_width() columns) but the last.
constexpr int64_t kCachedColumnBudget = int64_t{1} << 18;

bool packed_float() { return !blas::packed_kernel().empty(); }

template <class T>
int64_t cached_column_tile(const Geometry& g) {
  if constexpr (std::is_same_v<T, float>) {
    if (packed_float()) {
      const int64_t tile = column_tile(g, kCachedColumnBudget);
      const int64_t panel = blas::packed_panel_width();
      return tile < g.grid_numel ? std::max<int64_t>(panel, tile / panel * panel) : tile;
    }
  }
  return column_tile(g);
}

// Grid positions per product of a weight gradient (its depth) on the packed float32 kernels:
// as many whole depth slabs (blas::kPackedSlab) as keep the columns in L2, so each element
// still sums its depth in the slabs one product over `tile` positions would use (the same
// bits); `tile` otherwise.
template <class T>
int64_t weight_grad_tile(const Geometry& g, int64_t tile) {
  if constexpr (std::is_same_v<T, float>) {
    if (packed_float()) {
      const int64_t slabs = kCachedColumnBudget / std::max<int64_t>(g.rows(), 1) /
                            blas::kPackedSlab;
      return std::min(tile, std::max<int64_t>(1, slabs) * blas::kPackedSlab);
    }
  }
  return tile;
}

// Items (sample, group) per chunk so that a chunk does at least kConvGrain multiply-adds.
int64_t item_grain(const Geometry& g) {
  const int64_t work = std::max<int64_t>(1, g.grid_channels * g.rows() * g.grid_numel);
  return std::max<int64_t>(1, kConvGrain / work);
}

template <class T>
std::unique_ptr<T[]> uninitialized(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// n floats at a 64-byte boundary (B panels the packed kernels load whole cache lines of).
struct FreeAligned {
  void operator()(float* p) const { std::free(p); }
};
std::unique_ptr<float, FreeAligned> aligned_floats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float) + 63) / 64 * 64;
  float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<float, FreeAligned>(p);
}

// -- direct 2-d convolution (float) --------------------------------------------------------
//
// Small images make im2col + GEMM pay more for the column copy and the per-product overhead
// than for the multiply-adds. The direct kernel instead keeps a register tile of a few
// output columns x kLanesOut output channels and runs the whole reduction over (input
// channel, kernel row, kernel column) into it: one broadcast image value and one FMA per
// column vector and reduction step, nothing copied but a zero-padded image when there is
// padding.
//
// The tile is built of vectors of the running CPU's register width VB (simd.h
// native_vector_bytes): 16 channels are one AVX-512 register, two AVX2 registers or four
// SSE2 ones. A 64-byte GCC vector in the AVX2 clone is lowered through the stack (every FMA
// went through memory there: the CNN benchmark's second convolution ran 5-10x slower), so
// each width gets its own instantiation and the callers dispatch once per convolution. The channel layout (packed weights, tiles) is the
// same for every width, and so is every sum's order: results do not depend on the CPU.

constexpr int64_t kLanesOut = 16;  // output channels per tile column

// Vectors per 16-channel column and the tile (columns, or weight rows for the gradient) that
// keeps the accumulators in registers: 6 x 1 of AVX-512's 32, 6 x 2 of AVX2's 16 (the other
// three hold the weights and the broadcast), 2 x 4 of SSE2's 16.
template <int VB>
struct DirectWidth {
  static constexpr int kVectors = static_cast<int>(kLanesOut * sizeof(float)) / VB;
  static constexpr int kTile = VB == 16 ? 2 : 6;
};

// Calls f(std::integral_constant<int, VB>) with the running CPU's vector width.
template <class F>
void with_vector_bytes(F&& f) {
  switch (native_vector_bytes()) {
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    default: f(std::integral_constant<int, 16>{}); break;
  }
}

#if defined(__GNUC__) || defined(__clang__)
// tile[t][l] = init[l] + sum_r x[offs[r] + t * step] * wt[r][l] for t < XT, l < kLanesOut.
template <int VB, int XT>
PLAIT_CLONES void direct_tile(const float* __restrict x, const int64_t* __restrict offs,
                              int64_t reduction, int64_t step, const float* __restrict wt,
                              const float* __restrict init, float* __restrict tile) {
  typedef float Vec __attribute__((vector_size(VB)));
  constexpr int NV = DirectWidth<VB>::kVectors;
  constexpr int VL = VB / static_cast<int>(sizeof(float));
  Vec acc[XT][NV];
  for (int v = 0; v < NV; ++v) {
    Vec start;
    std::memcpy(&start, init + v * VL, sizeof(Vec));
    for (int t = 0; t < XT; ++t) acc[t][v] = start;
  }
  for (int64_t r = 0; r < reduction; ++r) {
    Vec w[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&w[v], wt + r * kLanesOut + v * VL, sizeof(Vec));
    const float* xr = x + offs[r];
    for (int t = 0; t < XT; ++t) {
      const float xv = xr[t * step];
      for (int v = 0; v < NV; ++v) acc[t][v] += xv * w[v];
    }
  }
  for (int t = 0; t < XT; ++t) {
    for (int v = 0; v < NV; ++v) {
      std::memcpy(tile + t * kLanesOut + v * VL, &acc[t][v], sizeof(Vec));
    }
  }
}

// acc[t][l] += sum_p x[pos[p] + offs[t]] * gt[p][l] for t < RT: RT rows of a weight
// gradient, accumulated in registers over every grid position of a sample.
template <int VB, int RT>
PLAIT_CLONES void direct_grad_tile(const float* __restrict x, const int64_t* __restrict offs,
                                   const int64_t* __restrict pos, int64_t positions,
                                   const float* __restrict gt, float* __restrict acc) {
  typedef float Vec __attribute__((vector_size(VB)));
  constexpr int NV = DirectWidth<VB>::kVectors;
  constexpr int VL = VB / static_cast<int>(sizeof(float));
  Vec a[RT][NV];
  for (int t = 0; t < RT; ++t) {
    for (int v = 0; v < NV; ++v) {
      std::memcpy(&a[t][v], acc + t * kLanesOut + v * VL, sizeof(Vec));
    }
  }
  for (int64_t p = 0; p < positions; ++p) {
    Vec gv[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&gv[v], gt + p * kLanesOut + v * VL, sizeof(Vec));
    const float* xp = x + pos[p];
    for (int t = 0; t < RT; ++t) {
      const float xv = xp[offs[t]];
      for (int v = 0; v < NV; ++v) a[t][v] += xv * gv[v];
    }
  }
  for (int t = 0; t < RT; ++t) {
    for (int v = 0; v < NV; ++v) {
      std::memcpy(acc + t * kLanesOut + v * VL, &a[t][v], sizeof(Vec));
    }
  }
}
#else
template <int VB, int RT>
void direct_grad_tile(const float* x, const int64_t* offs, const int64_t* pos,
                      int64_t positions, const float* gt, float* acc) {
  for (int64_t p = 0; p < positions; ++p) {
    for (int t = 0; t < RT; ++t) {
      const float v = x[pos[p] + offs[t]];
      for (int64_t l = 0; l < kLanesOut; ++l) acc[t * kLanesOut + l] += v * gt[p * kLanesOut + l];
    }
  }
}

template <int VB, int XT>
void direct_tile(const float* x, const int64_t* offs, int64_t reduction, int64_t step,
                 const float* wt, const float* init, float* tile) {
  for (int t = 0; t < XT; ++t) {
    for (int64_t l = 0; l < kLanesOut; ++l) tile[t * kLanesOut + l] = init[l];
  }
  for (int64_t r = 0; r < reduction; ++r) {
    for (int t = 0; t < XT; ++t) {
      const float v = x[offs[r] + t * step];
      for (int64_t l = 0; l < kLanesOut; ++l) tile[t * kLanesOut + l] += v * wt[r * kLanesOut + l];
    }
  }
}
#endif

// Whether the direct kernel takes this convolution: 2-d, a small grid (where im2col + GEMM
// lose) with a long enough reduction (a short one leaves the tile's scattered stores
// dominant, where one GEMM over the columns wins), and every read inside the zero-padded
// image (make_geometry does not tie the grid size to the image size, so this is checked
// here).
bool direct_fits(const Geometry& g) {
  if (g.nd != 2 || g.img_channels == 0) return false;
  if (g.grid_numel == 0 || g.grid_numel > 1024 || g.rows() < 32) return false;
  for (int d = 0; d < 2; ++d) {
    const int64_t last = (g.grid[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dil[d];
    if (last >= g.img[d] + 2 * g.pad[d]) return false;
  }
  return true;
}

// The image as the direct kernels read it: zero-padded by (pad_h, pad_w) on every side when
// there is padding (a copy per sample), and the offset of each reduction row (input channel,
// kernel row, kernel column) from a kernel placement's corner.
struct DirectImage {
  int64_t HP = 0, WP = 0;
  bool padded = false;
  std::unique_ptr<int64_t[]> offs;

  explicit DirectImage(const Geometry& g)
      : HP(g.img[0] + 2 * g.pad[0]), WP(g.img[1] + 2 * g.pad[1]),
        padded(g.pad[0] || g.pad[1]), offs(uninitialized<int64_t>(g.rows())) {
    for (int64_t c = 0, r = 0; c < g.img_channels; ++c) {
      for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[1]; ++kw, ++r) {
          offs[r] = c * HP * WP + kh * g.dil[0] * WP + kw * g.dil[1];
        }
      }
    }
  }
  // A zeroed buffer for `source` (null without padding).
  std::unique_ptr<float[]> buffer(const Geometry& g) const {
    if (!padded) return nullptr;
    std::unique_ptr<float[]> buf = uninitialized<float>(g.img_channels * HP * WP);
    std::fill(buf.get(), buf.get() + g.img_channels * HP * WP, 0.0f);
    return buf;
  }
  // One sample's image as read by the kernels: `img` itself, or its padded copy in `buf`
  // (whose border stays zero from `buffer`).
  const float* source(const Geometry& g, const float* img, float* buf) const {
    if (!padded) return img;
    const int64_t IH = g.img[0], IW = g.img[1];
    for (int64_t c = 0; c < g.img_channels; ++c) {
      for (int64_t y = 0; y < IH; ++y) {
        std::memcpy(buf + (c * HP + y + g.pad[0]) * WP + g.pad[1], img + (c * IH + y) * IW,
                    static_cast<size_t>(IW) * sizeof(float));
      }
    }
    return buf;
  }
};

// grid[n, g] = bias + W_g (*) image[n, g] by direct_tile at VB bytes a vector; `bias` (all
// channels) may be null.
template <int VB>
void grid_from_image_direct(const Geometry& g, const float* image, const float* weight,
                            const float* bias, float* grid) {
  constexpr int kTileX = DirectWidth<VB>::kTile;
  const int64_t R = g.rows(), C = g.grid_channels, P = g.grid_numel;
  const int64_t blocks = (C + kLanesOut - 1) / kLanesOut;
  const int64_t OH = g.grid[0], OW = g.grid[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const DirectImage plan(g);
  // weights as [group][block][r][lane] and the bias per [group][block][lane], zero-padded
  std::unique_ptr<float[]> wt = uninitialized<float>(g.groups * blocks * R * kLanesOut);
  std::unique_ptr<float[]> init = uninitialized<float>(g.groups * blocks * kLanesOut);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t b = 0; b < blocks; ++b) {
      float* wb = wt.get() + (grp * blocks + b) * R * kLanesOut;
      float* ib = init.get() + (grp * blocks + b) * kLanesOut;
      for (int64_t l = 0; l < kLanesOut; ++l) {
        const int64_t o = b * kLanesOut + l;
        ib[l] = bias && o < C ? bias[grp * C + o] : 0.0f;
        for (int64_t r = 0; r < R; ++r) {
          wb[r * kLanesOut + l] = o < C ? weight[grp * g.weight_group() + o * R + r] : 0.0f;
        }
      }
    }
  }
  const int64_t* offs = plan.offs.get();
  const int64_t items = g.batch * g.groups;
  parallel_for(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    std::unique_ptr<float[]> pad_buf = plan.buffer(g);
    alignas(64) float tile[kTileX * kLanesOut];
    for (int64_t i = i0; i < i1; ++i) {
      const float* src = plan.source(g, image + i * g.img_item(), pad_buf.get());
      const int64_t grp = i % g.groups;
      float* out = grid + i * g.grid_item();
      for (int64_t b = 0; b < blocks; ++b) {
        const float* wb = wt.get() + (grp * blocks + b) * R * kLanesOut;
        const float* ib = init.get() + (grp * blocks + b) * kLanesOut;
        const int64_t lanes = std::min(kLanesOut, C - b * kLanesOut);
        float* ob = out + b * kLanesOut * P;
        auto scatter = [&](int64_t oy, int64_t ox, int n) {
          for (int t = 0; t < n; ++t) {
            for (int64_t l = 0; l < lanes; ++l) {
              ob[l * P + oy * OW + ox + t] = tile[t * kLanesOut + l];
            }
          }
        };
        for (int64_t oy = 0; oy < OH; ++oy) {
          const float* row = src + oy * sh * plan.WP;
          int64_t ox = 0;
          for (; ox + kTileX <= OW; ox += kTileX) {
            direct_tile<VB, kTileX>(row + ox * sw, offs, R, sw, wb, ib, tile);
            scatter(oy, ox, kTileX);
          }
          for (; ox < OW; ++ox) {
            direct_tile<VB, 1>(row + ox * sw, offs, R, sw, wb, ib, tile);
            scatter(oy, ox, 1);
          }
        }
      }
    }
  });
}

// grid[n, g] = W_g @ im2col(image[n, g]) on the packed float32 kernels without copies
// between im2col and the kernels: each group's weight is packed once for every sample and
// tile, and im2col writes each column tile straight into B panels (the tile's columns of one
// panel side by side, every row of the panel W floats long). On the (32, 64, 56, 56) 3x3
// benchmark layer the two copies this saves (the weight per tile, the columns per tile) were
// a fifth of the forward's time. The products are packed_sgemm's, so the bits are those of
// the path through blas::gemm.
void grid_from_image_panels(const Geometry& g, const float* image, const float* weight,
                            float* grid) {
  const int64_t items = g.batch * g.groups;
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const int64_t W = blas::packed_panel_width();
  const int64_t tile = cached_column_tile<float>(g);  // whole panels but the last
  const int64_t a_floats = blas::packed_a_floats(C, K);
  auto packed_weight = aligned_floats(a_floats * g.groups);
  for (int64_t group = 0; group < g.groups; ++group) {
    blas::pack_a(C, K, weight + group * g.weight_group(), K,
                 packed_weight.get() + group * a_floats);
  }
  const int64_t panels = (std::min(tile, P) + W - 1) / W;
  parallel_for_balanced(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    auto col = aligned_floats(panels * K * W);
    for (int64_t i = i0; i < i1; ++i) {
      const float* img = image + i * g.img_item();
      float* out = grid + i * g.grid_item();
      const float* w = packed_weight.get() + (i % g.groups) * a_floats;
      for (int64_t p0 = 0; p0 < P; p0 += tile) {
        const int64_t p1 = std::min(P, p0 + tile);
        if ((p1 - p0) % W) {  // finite past the last column
          float* last = col.get() + (p1 - p0) / W * K * W;
          std::fill(last, last + K * W, 0.0f);
        }
        if (g.nd == 2) {
          im2col_2d(g, img, p0, p1, col.get(), W);
        } else {
          for (int64_t q0 = p0, j = 0; q0 < p1; q0 += W, ++j) {
            im2col(g, img, q0, std::min(p1, q0 + W), col.get() + j * K * W, W);
          }
        }
        blas::packed_gemm_panels(C, p1 - p0, K, w, col.get(), K * W, 0.0f, out + p0, P);
      }
    }
  });
}

// grid[n, g] = W_g @ im2col(image[n, g]) for every (sample, group).
template <class T>
void grid_from_image(const Geometry& g, const T* image, const T* weight, T* grid) {
  if constexpr (std::is_same_v<T, float>) {
    if (direct_fits(g)) {
      with_vector_bytes([&](auto vb) {
        grid_from_image_direct<decltype(vb)::value>(g, image, weight, nullptr, grid);
      });
      return;
    }
    if (packed_float() && !g.identity()) {
      grid_from_image_panels(g, image, weight, grid);
      return;
    }
  }
  const int64_t items = g.batch * g.groups;
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const bool identity = g.identity();
  const int64_t tile = cached_column_tile<T>(g);
  // Balanced chunks: a worker that starts late (a busy machine) takes fewer samples instead of
  // making the caller wait for half the batch; samples are independent, so results do not
  // depend on the split.
  parallel_for_balanced(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * tile);
    for (int64_t i = i0; i < i1; ++i) {
      const T* img = image + i * g.img_item();
      T* out = grid + i * g.grid_item();
      const T* w = weight + (i % g.groups) * g.weight_group();
      if (identity) {
        mm(false, false, C, P, K, w, K, img, P, T(0), out, P);
        continue;
      }
      for (int64_t p0 = 0; p0 < P; p0 += tile) {
        const int64_t p1 = std::min(P, p0 + tile);
        im2col(g, img, p0, p1, col.get(), p1 - p0);
        mm(false, false, C, p1 - p0, K, w, K, col.get(), p1 - p0, T(0),
                   out + p0, P);
      }
    }
  });
}

// image[n, g] = col2im(W_g^T @ grid[n, g]) for every (sample, group).
//
// Unlike the direct kernels, the bits follow the product kernels, not the vector width:
// mm() runs float32 on the packed kernels (AVX-512 and AVX2 give the same bits) where the CPU
// has AVX2 and FMA, and on OpenBLAS, with its own summation order per CPU, where it lacks them
// or PLAIT_CPU_VECTOR_BYTES=16 says so. A width-independent result would need a kernel of our
// own with the packed kernels' FMA order on CPUs without FMA; the products are left as they
// are by design (tests/test_backend_cpu_widths.py compares this gradient's bits only between
// runs on the same product kernels).
template <class T>
void image_from_grid(const Geometry& g, const T* grid, const T* weight, T* image) {
  const int64_t items = g.batch * g.groups;
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const bool identity = g.identity();
  const int64_t tile = cached_column_tile<T>(g);
  // Balanced chunks, as the forward's (samples are independent: the same bits).
  parallel_for_balanced(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * tile);
    for (int64_t i = i0; i < i1; ++i) {
      const T* in = grid + i * g.grid_item();
      T* img = image + i * g.img_item();
      const T* w = weight + (i % g.groups) * g.weight_group();
      if (identity) {
        mm(true, false, K, P, C, w, K, in, P, T(0), img, P);
        continue;
      }
      std::fill(img, img + g.img_item(), T(0));
      for (int64_t p0 = 0; p0 < P; p0 += tile) {
        const int64_t p1 = std::min(P, p0 + tile);
        mm(true, false, K, p1 - p0, C, w, K, in + p0, P, T(0), col.get(),
                   p1 - p0);
        col2im(g, col.get(), p0, p1, img);
      }
    }
  });
}

// acc (wsize, [group][grid channel][row]) = the weight gradient of samples [n0, n1) by
// direct_grad_tile at VB bytes a vector: per sample and channel block the grid transposed to
// [position][lane], then each tile of rows sums over all positions in registers.
template <int VB>
void weight_grad_direct(const Geometry& g, const float* grid, const float* image, int64_t n0,
                        int64_t n1, float* acc) {
  constexpr int kTileRows = DirectWidth<VB>::kTile;
  const int64_t R = g.rows(), C = g.grid_channels, P = g.grid_numel, OW = g.grid[1];
  const int64_t blocks = (C + kLanesOut - 1) / kLanesOut;
  const DirectImage plan(g);
  std::unique_ptr<int64_t[]> pos = uninitialized<int64_t>(P);
  for (int64_t p = 0; p < P; ++p) {
    pos[p] = (p / OW) * g.stride[0] * plan.WP + (p % OW) * g.stride[1];
  }
  std::unique_ptr<float[]> sums = uninitialized<float>(g.groups * blocks * R * kLanesOut);
  std::fill(sums.get(), sums.get() + g.groups * blocks * R * kLanesOut, 0.0f);
  std::unique_ptr<float[]> pad_buf = plan.buffer(g);
  std::unique_ptr<float[]> gt = uninitialized<float>(P * kLanesOut);
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const int64_t i = n * g.groups + grp;
      const float* src = plan.source(g, image + i * g.img_item(), pad_buf.get());
      const float* gr = grid + i * g.grid_item();
      for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t l = 0; l < kLanesOut; ++l) {
          const int64_t o = b * kLanesOut + l;
          for (int64_t p = 0; p < P; ++p) gt[p * kLanesOut + l] = o < C ? gr[o * P + p] : 0.0f;
        }
        float* a = sums.get() + (grp * blocks + b) * R * kLanesOut;
        int64_t r = 0;
        for (; r + kTileRows <= R; r += kTileRows) {
          direct_grad_tile<VB, kTileRows>(src, plan.offs.get() + r, pos.get(), P, gt.get(),
                                      a + r * kLanesOut);
        }
        for (; r < R; ++r) {
          direct_grad_tile<VB, 1>(src, plan.offs.get() + r, pos.get(), P, gt.get(),
                              a + r * kLanesOut);
        }
      }
    }
  }
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t o = 0; o < C; ++o) {
      const float* a = sums.get() + (grp * blocks + o / kLanesOut) * R * kLanesOut;
      float* w = acc + grp * g.weight_group() + o * R;
      for (int64_t r = 0; r < R; ++r) w[r] = a[r * kLanesOut + o % kLanesOut];
    }
  }
}

// acc (groups x C x K) = sum over samples [n0, n1) of grid @ im2col^T on the packed float32
// kernels, computed as its transpose acc^T (K x C) += im2col @ grid^T: im2col writes each
// 256-deep slab of positions straight into the packed A layout (the column matrix's rows are
// A's rows), and only the grid's short side (C x 256 per slab) is packed, where
// grid @ im2col^T packed the whole column matrix by 8x8 transposes (a twentieth of a 3x3
// layer's forward+backward). Every element takes the same products in the same order
// (slabs of the same tiles, samples in order, from zero), so the bits are those of the
// untransposed product. Needs K > 1 (a one-row A is packed in the other layout).
void weight_grad_packed(const Geometry& g, const float* grid, const float* image, int64_t n0,
                        int64_t n1, float* acc) {
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const int64_t wtile = weight_grad_tile<float>(g, column_tile(g));
  const int64_t slab = blas::packed_a_slab_floats(K);
  auto a = aligned_floats((wtile + blas::kPackedSlab - 1) / blas::kPackedSlab * slab);
  std::unique_ptr<float[]> acc_t = uninitialized<float>(K * C);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    std::fill(acc_t.get(), acc_t.get() + K * C, 0.0f);
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t i = n * g.groups + grp;
      const float* gr = grid + i * g.grid_item();
      const float* img = image + i * g.img_item();
      for (int64_t p0 = 0; p0 < P; p0 += wtile) {
        const int64_t p1 = std::min(P, p0 + wtile);
        for (int64_t q0 = p0, s = 0; q0 < p1; q0 += blas::kPackedSlab, ++s) {
          im2col(g, img, q0, std::min(p1, q0 + blas::kPackedSlab), a.get() + s * slab,
                 blas::kPackedSlab);
        }
        // B = the grid's tile transposed: element (position p, channel c) at gr[c * P + p0 + p]
        blas::packed_gemm_b(K, C, p1 - p0, a.get(), gr + p0, 1, P, 1.0f, acc_t.get(), C);
      }
    }
    float* w = acc + grp * g.weight_group();
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t r = 0; r < K; ++r) w[c * K + r] = acc_t[r * C + c];
    }
  }
}

// dW_g = sum over samples of grid[n, g] @ im2col(image[n, g])^T. Partial sums per fixed block
// of samples, added in block order.
template <class T>
void weight_grad(const Geometry& g, const T* grid, const T* image, T* dw) {
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const int64_t wsize = g.groups * g.weight_group();
  const bool identity = g.identity();
  const int64_t tile = column_tile(g);
  int64_t blocks = std::min(g.batch, kMaxGradBlocks);
  blocks = std::max<int64_t>(1, std::min(blocks, kPartialBudget / std::max<int64_t>(wsize, 1)));
  const int64_t per_block = g.batch ? (g.batch + blocks - 1) / blocks : 1;
  blocks = fixed_block_count(g.batch, per_block);
  if (blocks == 0) {
    std::fill(dw, dw + wsize, T(0));
    return;
  }
  // Small grids (a few hundred positions) make per-sample products too thin for the GEMM:
  // there, runs of `nb` samples put their columns side by side and one product
  // dW_g^T += cols @ grads^T covers them all (the transposed product packs the short
  // grid-channel side, the cheaper one).
  const int64_t nb = identity || tile < P || K < C
      ? 1 : std::min(per_block, kColumnBudget / std::max<int64_t>(K * P, 1));
  std::unique_ptr<T[]> partials = blocks > 1 ? uninitialized<T>(blocks * wsize) : nullptr;
  bool direct = false;
  if constexpr (std::is_same_v<T, float>) direct = direct_fits(g);
  fixed_blocks(g.batch, per_block, [&](int64_t b, int64_t n0, int64_t n1) {
    T* acc = blocks > 1 ? partials.get() + b * wsize : dw;
    if constexpr (std::is_same_v<T, float>) {
      if (direct) {
        with_vector_bytes([&](auto vb) {
          weight_grad_direct<decltype(vb)::value>(g, grid, image, n0, n1, acc);
        });
        return;
      }
    }
    if (nb >= 2) {
      std::unique_ptr<T[]> col = uninitialized<T>(K * nb * P);
      std::unique_ptr<T[]> grads = uninitialized<T>(C * nb * P);
      std::unique_ptr<T[]> acc_t = uninitialized<T>(g.weight_group());
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        std::fill(acc_t.get(), acc_t.get() + g.weight_group(), T(0));
        for (int64_t s0 = n0; s0 < n1; s0 += nb) {
          const int64_t count = std::min(n1 - s0, nb), ld = count * P;
          for (int64_t j = 0; j < count; ++j) {
            const int64_t i = (s0 + j) * g.groups + grp;
            im2col(g, image + i * g.img_item(), 0, P, col.get() + j * P, ld);
            const T* gr = grid + i * g.grid_item();
            for (int64_t c = 0; c < C; ++c) {
              std::memcpy(grads.get() + c * ld + j * P, gr + c * P,
                          static_cast<size_t>(P) * sizeof(T));
            }
          }
          mm(false, true, K, C, ld, col.get(), ld, grads.get(), ld, T(1), acc_t.get(), C);
        }
        T* w = acc + grp * g.weight_group();
        for (int64_t c = 0; c < C; ++c) {
          for (int64_t r = 0; r < K; ++r) w[c * K + r] = acc_t[r * C + c];
        }
      }
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (packed_float() && !identity && K > 1) {
        weight_grad_packed(g, grid, image, n0, n1, acc);
        return;
      }
    }
    std::fill(acc, acc + wsize, T(0));
    const int64_t wtile = weight_grad_tile<T>(g, tile);
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * wtile);
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const int64_t i = n * g.groups + grp;
        const T* gr = grid + i * g.grid_item();
        const T* img = image + i * g.img_item();
        T* w = acc + grp * g.weight_group();
        if (identity) {
          mm(false, true, C, K, P, gr, P, img, P, T(1), w, K);
          continue;
        }
        for (int64_t p0 = 0; p0 < P; p0 += wtile) {
          const int64_t p1 = std::min(P, p0 + wtile);
          im2col(g, img, p0, p1, col.get(), p1 - p0);
          mm(false, true, C, K, p1 - p0, gr + p0, P, col.get(), p1 - p0, T(1),
                     w, K);
        }
      }
    }
  });
  if (blocks > 1) {
    parallel_for(wsize, kElementwiseGrain, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) {
        T total = partials[e];
        for (int64_t b = 1; b < blocks; ++b) total += partials[b * wsize + e];
        dw[e] = total;
      }
    });
  }
}

// The sum of row[0, n) in double, over kLanes independent partial sums (a fixed order, so
// the compiler vectorises it without reassociating anything).
constexpr int kLanes = 16;

template <class T>
PLAIT_CLONES double row_sum(const T* __restrict row, int64_t n) {
  double lanes[kLanes] = {};
  int64_t x = 0;
  for (; x + kLanes <= n; x += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(row[x + l]);
  }
  double total = 0;
  for (int l = 0; l < kLanes; ++l) total += lanes[l];
  for (; x < n; ++x) total += static_cast<double>(row[x]);
  return total;
}

// grad_bias[c] = sum over samples and positions of grad[n, c, ...], accumulated in double.
template <class T>
void bias_grad(const T* grad, int64_t batch, int64_t channels, int64_t inner, T* out) {
  parallel_for(channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(
                                                  1, batch * inner)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   double total = 0;
                   for (int64_t n = 0; n < batch; ++n) {
                     total += row_sum(grad + (n * channels + c) * inner, inner);
                   }
                   out[c] = static_cast<T>(total);
                 }
               });
}

// An operand as a contiguous buffer of the compute type T: the tensor itself when it already
// is one, else a converted copy held by `storage`.
template <class S, class T>
const T* contiguous(uintptr_t ptr, const Dims& shape, const Dims& strides,
                    std::unique_ptr<T[]>& storage) {
  const S* src = reinterpret_cast<const S*>(ptr);
  if constexpr (std::is_same_v<S, T>) {
    if (is_contiguous(shape, strides)) return src;
  }
  const int64_t n = numel(shape);
  storage = uninitialized<T>(n);
  T* dst = storage.get();
  if (n == 0) return dst;
  const size_t nd = shape.size();
  const int64_t inner = shape[nd - 1], step = strides[nd - 1];
  const int64_t lines = n / inner;
  parallel_for(lines, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t l0,
                                                                            int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      int64_t rest = l, offset = 0;
      for (size_t d = nd - 1; d-- > 0;) {
        offset += (rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      const S* from = src + offset;
      T* to = dst + l * inner;
      if (step == 1) {
        widen(to, from, inner);
      } else {
        for (int64_t t = 0; t < inner; ++t) to[t] = static_cast<T>(from[t * step]);
      }
    }
  });
  return dst;
}

// Where a contiguous output of storage type S is computed: in place for S == T, else in a
// T buffer rounded into the output by `finish`.
template <class S, class T>
class Output {
 public:
  Output(uintptr_t ptr, int64_t n) : ptr_(ptr), n_(n) {
    if constexpr (!std::is_same_v<S, T>) buffer_ = uninitialized<T>(n);
  }
  T* data() {
    if constexpr (std::is_same_v<S, T>) {
      return reinterpret_cast<T*>(ptr_);
    } else {
      return buffer_.get();
    }
  }
  void finish() {
    if constexpr (!std::is_same_v<S, T>) {
      S* out = reinterpret_cast<S*>(ptr_);
      const T* from = buffer_.get();
      parallel_for(n_, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        if constexpr (is_reduced_float_v<S>) {
          round_into(out + i0, from + i0, i1 - i0);
        } else {
          wrap_into(out + i0, from + i0, i1 - i0);
        }
      });
    }
  }

 private:
  uintptr_t ptr_;
  int64_t n_;
  std::unique_ptr<T[]> buffer_;
};

// Calls f(S{}, T{}) with the storage type and compute type of a floating dtype code, or with
// `integers` of an integer one (computed in its unsigned WrapType, which wraps as PyTorch's
// integer convolution does: the low bits of a sum of products do not depend on the width).
template <class F>
bool visit_conv_dtype(int dtype, bool integers, F&& f) {
  switch (dtype) {
    case dtype_code<float>(): f(float{}, float{}); return true;
    case dtype_code<double>(): f(double{}, double{}); return true;
    case dtype_code<Half>(): f(Half{}, float{}); return true;
    case dtype_code<BFloat16>(): f(BFloat16{}, float{}); return true;
    default: break;
  }
  if (!integers) return false;
  switch (dtype) {
    case dtype_code<uint8_t>(): f(uint8_t{}, WrapType<uint8_t>{}); return true;
    case dtype_code<int8_t>(): f(int8_t{}, WrapType<int8_t>{}); return true;
    case dtype_code<int16_t>(): f(int16_t{}, WrapType<int16_t>{}); return true;
    case dtype_code<int32_t>(): f(int32_t{}, WrapType<int32_t>{}); return true;
    case dtype_code<int64_t>(): f(int64_t{}, WrapType<int64_t>{}); return true;
    default: return false;
  }
}

}  // namespace

bool convolution(int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides,
                 const Dims& in_shape, uintptr_t input, const Dims& in_strides,
                 const Dims& w_shape, uintptr_t weight, const Dims& w_strides,
                 const ConvParams& params) {
  check_layout(out_shape, {&out_strides});
  check_layout(in_shape, {&in_strides});
  check_layout(w_shape, {&w_strides});
  const Geometry g = make_geometry(in_shape, w_shape, out_shape, params);
  if (!is_contiguous(out_shape, out_strides)) return false;
  return visit_conv_dtype(dtype, true, [&](auto s_tag, auto t_tag) {
    using S = decltype(s_tag);
    using T = decltype(t_tag);
    const int64_t n_out = numel(out_shape);
    if (n_out == 0) return;
    std::unique_ptr<T[]> in_buf, w_buf;
    const T* x = contiguous<S, T>(input, in_shape, in_strides, in_buf);
    const T* w = contiguous<S, T>(weight, w_shape, w_strides, w_buf);
    Output<S, T> result(out, n_out);
    if (!params.transposed) {
      grid_from_image(g, x, w, result.data());
    } else {
      image_from_grid(g, x, w, result.data());
    }
    result.finish();
  });
}

bool convolution_backward(int dtype, const Dims& go_shape, uintptr_t grad_out,
                          const Dims& go_strides, const Dims& in_shape, uintptr_t input,
                          const Dims& in_strides, const Dims& w_shape, uintptr_t weight,
                          const Dims& w_strides, const ConvParams& params,
                          uintptr_t grad_input, uintptr_t grad_weight, uintptr_t grad_bias) {
  check_layout(go_shape, {&go_strides});
  check_layout(in_shape, {&in_strides});
  check_layout(w_shape, {&w_strides});
  const Geometry g = make_geometry(in_shape, w_shape, go_shape, params);
  return visit_conv_dtype(dtype, false, [&](auto s_tag, auto t_tag) {
    using S = decltype(s_tag);
    using T = decltype(t_tag);
    std::unique_ptr<T[]> go_buf, in_buf, w_buf;
    const T* go = contiguous<S, T>(grad_out, go_shape, go_strides, go_buf);
    if (grad_input) {
      Output<S, T> gi(grad_input, numel(in_shape));
      const T* w = contiguous<S, T>(weight, w_shape, w_strides, w_buf);
      if (numel(in_shape)) {
        if (!params.transposed) {
          image_from_grid(g, go, w, gi.data());  // input on the image side
        } else {
          grid_from_image(g, go, w, gi.data());  // input on the grid side
        }
        gi.finish();
      }
    }
    if (grad_weight) {
      Output<S, T> gw(grad_weight, numel(w_shape));
      if (numel(w_shape)) {
        const T* x = contiguous<S, T>(input, in_shape, in_strides, in_buf);
        if (!params.transposed) {
          weight_grad(g, go, x, gw.data());
        } else {
          weight_grad(g, x, go, gw.data());
        }
        gw.finish();
      }
    }
    if (grad_bias) {
      const int64_t channels = go_shape[1];
      Output<S, T> gb(grad_bias, channels);
      if (channels) {
        const int64_t inner = go_shape[0] && channels ? numel(go_shape) / (go_shape[0] * channels)
                                                      : 0;
        bias_grad(go, go_shape[0], channels, inner, gb.data());
        gb.finish();
      }
    }
  });
}

}  // namespace plait::cpu
