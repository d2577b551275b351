// Products whose output is a single row or a single column (gemv.cpp).
#pragma once

#include "matmul.h"

namespace plait::cpu::blas::detail {

// c = alpha * a @ b + beta * c when c is 1 x n or m x 1 and the depth is at least 1 (float32
// and float64, any strides); false (nothing written) otherwise. beta == 0 never reads c.
template <class T>
bool vector_product(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                    T alpha, T beta);

}  // namespace plait::cpu::blas::detail
