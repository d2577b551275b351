// Convolution as im2col / col2im + GEMM (see conv.h for the image/grid view of both layouts).
#include "conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <type_traits>

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

void kernel_offset(const Geometry& g, int64_t kk, int64_t* k) {
  for (int d = g.nd - 1; d >= 0; --d) {
    k[d] = kk % g.kernel[d];
    kk /= g.kernel[d];
  }
}

// col[r][p - p0] = image value under kernel offset r at grid position p (zero in padding).
template <class T>
void im2col(const Geometry& g, const T* img, int64_t p0, int64_t p1, T* col) {
  const int64_t width = p1 - p0;
  const int64_t s = g.stride[g.nd - 1];
  std::vector<int64_t> k(g.nd);
  for (int64_t c = 0; c < g.img_channels; ++c) {
    const T* src = img + c * g.img_numel;
    for (int64_t kk = 0; kk < g.kernel_numel; ++kk) {
      kernel_offset(g, kk, k.data());
      T* dst = col + (c * g.kernel_numel + kk) * width;
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

// The adjoint of im2col: image values under each kernel offset accumulate the column values.
template <class T>
void col2im(const Geometry& g, const T* col, int64_t p0, int64_t p1, T* img) {
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

int64_t column_tile(const Geometry& g) {
  const int64_t rows = std::max<int64_t>(g.rows(), 1);
  return std::max<int64_t>(1, std::min(g.grid_numel, kColumnBudget / rows));
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

// grid[n, g] = W_g @ im2col(image[n, g]) for every (sample, group).
template <class T>
void grid_from_image(const Geometry& g, const T* image, const T* weight, T* grid) {
  const int64_t items = g.batch * g.groups;
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const bool identity = g.identity();
  const int64_t tile = column_tile(g);
  parallel_for(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * tile);
    for (int64_t i = i0; i < i1; ++i) {
      const T* img = image + i * g.img_item();
      T* out = grid + i * g.grid_item();
      const T* w = weight + (i % g.groups) * g.weight_group();
      if (identity) {
        blas::gemm(false, false, C, P, K, T(1), w, K, img, P, T(0), out, P);
        continue;
      }
      for (int64_t p0 = 0; p0 < P; p0 += tile) {
        const int64_t p1 = std::min(P, p0 + tile);
        im2col(g, img, p0, p1, col.get());
        blas::gemm(false, false, C, p1 - p0, K, T(1), w, K, col.get(), p1 - p0, T(0),
                   out + p0, P);
      }
    }
  });
}

// image[n, g] = col2im(W_g^T @ grid[n, g]) for every (sample, group).
template <class T>
void image_from_grid(const Geometry& g, const T* grid, const T* weight, T* image) {
  const int64_t items = g.batch * g.groups;
  const int64_t P = g.grid_numel, K = g.rows(), C = g.grid_channels;
  const bool identity = g.identity();
  const int64_t tile = column_tile(g);
  parallel_for(items, item_grain(g), [&](int64_t i0, int64_t i1) {
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * tile);
    for (int64_t i = i0; i < i1; ++i) {
      const T* in = grid + i * g.grid_item();
      T* img = image + i * g.img_item();
      const T* w = weight + (i % g.groups) * g.weight_group();
      if (identity) {
        blas::gemm(true, false, K, P, C, T(1), w, K, in, P, T(0), img, P);
        continue;
      }
      std::fill(img, img + g.img_item(), T(0));
      for (int64_t p0 = 0; p0 < P; p0 += tile) {
        const int64_t p1 = std::min(P, p0 + tile);
        blas::gemm(true, false, K, p1 - p0, C, T(1), w, K, in + p0, P, T(0), col.get(),
                   p1 - p0);
        col2im(g, col.get(), p0, p1, img);
      }
    }
  });
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
  std::unique_ptr<T[]> partials = blocks > 1 ? uninitialized<T>(blocks * wsize) : nullptr;
  fixed_blocks(g.batch, per_block, [&](int64_t b, int64_t n0, int64_t n1) {
    T* acc = blocks > 1 ? partials.get() + b * wsize : dw;
    std::fill(acc, acc + wsize, T(0));
    std::unique_ptr<T[]> col = identity ? nullptr : uninitialized<T>(K * tile);
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const int64_t i = n * g.groups + grp;
        const T* gr = grid + i * g.grid_item();
        const T* img = image + i * g.img_item();
        T* w = acc + grp * g.weight_group();
        if (identity) {
          blas::gemm(false, true, C, K, P, T(1), gr, P, img, P, T(1), w, K);
          continue;
        }
        for (int64_t p0 = 0; p0 < P; p0 += tile) {
          const int64_t p1 = std::min(P, p0 + tile);
          im2col(g, img, p0, p1, col.get());
          blas::gemm(false, true, C, K, p1 - p0, T(1), gr + p0, P, col.get(), p1 - p0, T(1),
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

// grad_bias[c] = sum over samples and positions of grad[n, c, ...], accumulated in double.
template <class T>
void bias_grad(const T* grad, int64_t batch, int64_t channels, int64_t inner, T* out) {
  parallel_for(channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(
                                                  1, batch * inner)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   double total = 0;
                   for (int64_t n = 0; n < batch; ++n) {
                     const T* row = grad + (n * channels + c) * inner;
                     for (int64_t x = 0; x < inner; ++x) total += static_cast<double>(row[x]);
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
        round_into(out + i0, from + i0, i1 - i0);
      });
    }
  }

 private:
  uintptr_t ptr_;
  int64_t n_;
  std::unique_ptr<T[]> buffer_;
};

// Calls f(S{}, T{}) with the storage type and compute type of a floating dtype code.
template <class F>
bool visit_float_dtype(int dtype, F&& f) {
  switch (dtype) {
    case dtype_code<float>(): f(float{}, float{}); return true;
    case dtype_code<double>(): f(double{}, double{}); return true;
    case dtype_code<Half>(): f(Half{}, float{}); return true;
    case dtype_code<BFloat16>(): f(BFloat16{}, float{}); return true;
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
  return visit_float_dtype(dtype, [&](auto s_tag, auto t_tag) {
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
  return visit_float_dtype(dtype, [&](auto s_tag, auto t_tag) {
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
