// tripy-kernels: XLA FFI handler `tripy_onednn_max_pool_f32`, a StableHLO max reduce_window (float32; a max pool:
// padding counts as -inf) run by oneDNN's pooling on its threads (TBB's pool, the convolutions' one). XLA:CPU runs
// it as one loop on one core: ResNet-18's 3x3 max pool after its first convolution took 0.86 ms of an 18 ms call
// at batch 1, 6.2 of 138 at batch 8.
//
// x and y are read and written as XLA stores them (row-major): `layout` names their dims in oneDNN's order [N, C,
// *spatial] (channels-last activations: [0, 3, 1, 2]); `window`, `strides`, `pad_lo`, `pad_hi` and `dilation` are
// the window's along the spatial dims, in that order.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "onednn.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using tripy_kernels::Describe;
using tripy_kernels::Dims;
using tripy_kernels::Engine;
using tripy_kernels::Logical;

Dims Of(ffi::Span<const int64_t> span) { return Dims(span.begin(), span.end()); }

struct Pool {
  dnnl::pooling_forward primitive;
  dnnl::memory::desc src, dst;
};

// The pooling primitive for these shapes and attributes, made once and kept for the life of the process.
std::shared_ptr<Pool> Find(ffi::Span<const int64_t> x, ffi::Span<const int64_t> y, const std::vector<Dims>& attrs) {
  static std::mutex lock;
  static std::map<std::vector<Dims>, std::shared_ptr<Pool>> made;
  std::vector<Dims> key = {Of(x), Of(y)};
  key.insert(key.end(), attrs.begin(), attrs.end());
  std::lock_guard<std::mutex> guard(lock);
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  const Dims& layout = attrs[0];
  ffi::Span<const int64_t> order(layout.data(), layout.size());
  Dims xd, xs, yd, ys, dilation;
  Logical(x, order, xd, xs);
  Logical(y, order, yd, ys);
  for (int64_t d : attrs[5]) dilation.push_back(d - 1);  // (oneDNN counts the gaps)
  auto src = Describe(xd, xs), dst = Describe(yd, ys);
  dnnl::pooling_forward::primitive_desc pd(Engine(), dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::pooling_max, src, dst, attrs[2], attrs[1], dilation,
                                           attrs[3], attrs[4]);
  return made.emplace(key, std::make_shared<Pool>(Pool{dnnl::pooling_forward(pd), src, dst})).first->second;
}

ffi::Error MaxPool(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> layout,
                   ffi::Span<const int64_t> window, ffi::Span<const int64_t> strides,
                   ffi::Span<const int64_t> pad_lo, ffi::Span<const int64_t> pad_hi,
                   ffi::Span<const int64_t> dilation) {
  if (x.element_type() != ffi::F32 || y->element_type() != ffi::F32) {
    return ffi::Error::InvalidArgument("tripy_onednn_max_pool_f32: operands must be float32");
  }
  size_t rank = x.dimensions().size(), spatial = rank - 2;
  if (rank < 3 || y->dimensions().size() != rank || layout.size() != rank || window.size() != spatial ||
      strides.size() != spatial || pad_lo.size() != spatial || pad_hi.size() != spatial ||
      dilation.size() != spatial) {
    return ffi::Error::InvalidArgument("tripy_onednn_max_pool_f32: the attributes do not match the operand's rank");
  }
  try {
    auto pool = Find(x.dimensions(), y->dimensions(),
                     {Of(layout), Of(window), Of(strides), Of(pad_lo), Of(pad_hi), Of(dilation)});
    dnnl::stream stream(Engine());
    dnnl::memory src(pool->src, Engine(), x.untyped_data()), dst(pool->dst, Engine(), y->untyped_data());
    pool->primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
  } catch (const dnnl::error& e) {
    return ffi::Error::Internal(std::string("oneDNN max pooling failed: ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(TripyOnednnMaxPoolF32, MaxPool,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("layout")
                                  .Attr<ffi::Span<const int64_t>>("window")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<ffi::Span<const int64_t>>("pad_lo")
                                  .Attr<ffi::Span<const int64_t>>("pad_hi")
                                  .Attr<ffi::Span<const int64_t>>("dilation"));
