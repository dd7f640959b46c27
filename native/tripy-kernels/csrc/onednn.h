// tripy-kernels: what the oneDNN handlers share: the engine, and buffers as oneDNN reads them (logical dims in
// oneDNN's order, with the strides of the row-major layout XLA stores them in).
#pragma once

#include <cstdint>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "xla/ffi/api/ffi.h"

namespace tripy_kernels {

namespace ffi = xla::ffi;
using Dims = std::vector<int64_t>;

inline dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline Dims RowMajorStrides(ffi::Span<const int64_t> shape) {
  Dims strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

// The logical [first, second, *spatial] dims and strides of a buffer whose dims `order` names in that order.
inline void Logical(ffi::Span<const int64_t> shape, ffi::Span<const int64_t> order, Dims& dims, Dims& strides) {
  Dims stored = RowMajorStrides(shape);
  for (int64_t d : order) {
    dims.push_back(shape[d]);
    strides.push_back(stored[d]);
  }
}

inline dnnl::memory::desc Describe(const Dims& dims, const Dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

inline bool IsReference(const dnnl::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).find("ref") != std::string::npos;  // (also "conv:any+ref:any")
}

}  // namespace tripy_kernels
