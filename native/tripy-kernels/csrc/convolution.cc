// tripy-kernels: XLA FFI handler `tripy_onednn_convolution_f32`, a StableHLO convolution (float32; any
// dimension numbers; strided, padded, dilated, grouped and depthwise; transposed, as oneDNN's deconvolution) run
// by oneDNN.
//
// The operands and the result are read and written as XLA stores them: the handler describes each one to oneDNN
// by its logical dims ([N, C, *spatial] for the activations, [O, I, *spatial] for the weights) and the strides of
// its stored row-major layout, which the attributes name (the StableHLO dimension numbers). oneDNN picks its
// kernel for those layouts (channels-last activations, as tripy's channels-last pass leaves them, are its fastest),
// reordering the activations only where it has no fast kernel for their layout. The weights are read in oneDNN's
// blocked layout from a copy laid out once per weight buffer and kept while the buffer holds the same contents
// (``Weights``). Primitives are created once per distinct convolution and kept for the life of the process. oneDNN
// runs them on its threads: the TBB build, whose one pool of threads serves every thread that calls (XLA calls a
// custom call from any of its threads). With GNU OpenMP's, each calling thread had a team of its own, woken for each
// convolution after sleeping (spinning teams held the cores XLA's next ops wanted) and often placed on its caller's
// CPU, where the convolution ran at one core's speed: ResNet-18 at batch 1, 2-core VM, `convnet.py` alternated
// runs, 20.0-21.2 ms on TBB's threads against 22.0-26.2 on OpenMP teams kept on distinct CPUs by hand.
#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "oneapi/tbb/parallel_for.h"
#include "onednn.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using tripy_kernels::Describe;
using tripy_kernels::Dims;
using tripy_kernels::Engine;
using tripy_kernels::IsReference;
using tripy_kernels::Logical;

// A reorder from XLA's layout of an operand or result to oneDNN's, or back; none where they are the same.
struct Reorder {
  dnnl::memory::desc from, to;
  bool needed = false;
  dnnl::reorder primitive;

  Reorder() = default;
  Reorder(const dnnl::memory::desc& from_, const dnnl::memory::desc& to_) : from(from_), to(to_) {
    needed = from != to;
    if (needed) primitive = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to));
  }
};

// What the handler for fused convolutions applies to the convolution's result, in order, each reading the next
// extra operand where it has one (the ``post`` attribute; oneDNN's post-ops, computed as each block of the result
// is written).
enum Post : int64_t {
  kAddChannels = 1,  // + a [C] vector, broadcast along the result's feature dim (a bias, a BatchNorm's shift)
  kAddTensor = 2,    // + a tensor of the result's shape and layout (a residual connection)
  kRelu = 3,         // max(x, 0)
};

struct Convolution {
  dnnl::primitive primitive;  // (a convolution_forward, or a deconvolution_forward)
  std::vector<dnnl::memory::desc> post;  // (the post-ops' extra operands, as oneDNN reads them)
  Reorder src, weights, dst;  // (dst: from oneDNN's layout to XLA's)
  dnnl::memory::desc scratchpad;
  bool reference = false;  // (oneDNN has only a reference kernel for it: slow)
};

struct Attrs {
  ffi::Span<const int64_t> lhs, rhs, out, strides, pad_lo, pad_hi, dilation;
  int64_t groups;
  int64_t transposed;  // 1: a transposed convolution (oneDNN's deconvolution; `strides` its input's dilation)
  ffi::Span<const int64_t> post;  // the fused epilogue (``Post``), empty for a plain convolution
};

std::string Key(const ffi::AnyBuffer& x, const ffi::AnyBuffer& w, const Attrs& a) {
  std::ostringstream key;
  for (auto span : {x.dimensions(), w.dimensions(), a.lhs, a.rhs, a.out, a.strides, a.pad_lo, a.pad_hi, a.dilation}) {
    for (int64_t v : span) key << v << ',';
    key << ';';
  }
  key << a.groups << ',' << a.transposed << ';';
  for (int64_t v : a.post) key << v << ',';
  return key.str();
}

dnnl::memory::desc Any(const dnnl::memory::desc& like) {
  return dnnl::memory::desc(like.get_dims(), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

// oneDNN's convolution (or deconvolution) for the activations in XLA's layouts where it has a fast kernel for them,
// otherwise (a reference kernel: e.g. for a channels-first input and a channels-last result) in layouts of its
// choice, reordered on the way in and out. The weights in the layout of oneDNN's choice (blocked), laid out once per
// buffer and content (``Weights``); as stored where it has only a reference kernel for that.
template <typename Kind>
typename Kind::primitive_desc Choose(const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
                                    const dnnl::memory::desc& dst, const Attrs& a, dnnl::algorithm algorithm,
                                    const dnnl::post_ops& post) {
  Dims dilation;
  for (int64_t d : a.dilation) dilation.push_back(d - 1);  // (oneDNN counts the gaps)
  dnnl::primitive_attr attr;  // (a scratchpad per call: XLA may run one convolution on several threads at once)
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(post);
  auto make = [&](bool any_src, bool any_weights, bool any_dst) {
    return typename Kind::primitive_desc(Engine(), dnnl::prop_kind::forward_inference, algorithm,
                                         any_src ? Any(src) : src, any_weights ? Any(weights) : weights,
                                         any_dst ? Any(dst) : dst, Dims(a.strides.begin(), a.strides.end()), dilation,
                                         Dims(a.pad_lo.begin(), a.pad_lo.end()),
                                         Dims(a.pad_hi.begin(), a.pad_hi.end()), attr);
  };
  for (bool any_weights : {true, false}) {
    for (int any : {0, 1, 2, 3}) {  // (bit 0: the input in oneDNN's layout; bit 1: the result)
      auto pd = make(any & 1, any_weights, any & 2);
      if (!IsReference(pd)) return pd;
    }
  }
  return make(false, false, false);
}

template <typename Kind>
void Fill(Convolution& conv, const typename Kind::primitive_desc& pd, const dnnl::memory::desc& src,
          const dnnl::memory::desc& weights, const dnnl::memory::desc& dst) {
  conv.primitive = Kind(pd);
  conv.src = Reorder(src, pd.src_desc());
  conv.weights = Reorder(weights, pd.weights_desc());
  conv.dst = Reorder(pd.dst_desc(), dst);
  conv.scratchpad = pd.scratchpad_desc();
  // (an epilogue is fused only where the result is written in XLA's layout: its operands are in that layout)
  conv.reference = IsReference(pd) || (!conv.post.empty() && conv.dst.needed);
}

std::shared_ptr<Convolution> Create(ffi::Span<const int64_t> x, ffi::Span<const int64_t> w,
                                    ffi::Span<const int64_t> y, const Attrs& a) {
  Dims xd, xs, wd, ws, yd, ys;
  Logical(x, a.lhs, xd, xs);
  Logical(w, a.rhs, wd, ws);
  Logical(y, a.out, yd, ys);
  if (a.groups > 1) {  // [O, I/G, *k] -> [G, O/G, I/G, *k]: output feature o is in group o / (O/G)
    wd[0] /= a.groups;
    wd.insert(wd.begin(), a.groups);
    ws.insert(ws.begin(), ws[0] * wd[1]);
  }
  auto src = Describe(xd, xs), weights = Describe(wd, ws), dst = Describe(yd, ys);
  auto conv = std::make_shared<Convolution>();
  dnnl::post_ops post;
  for (int64_t op : a.post) {
    if (op == kRelu) {
      post.append_eltwise(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      continue;
    }
    if (op != kAddChannels && op != kAddTensor) throw dnnl::error(dnnl_invalid_arguments, "unknown post-op");
    Dims channels(yd.size(), 1), strides(yd.size(), 1);  // ([1, C, 1, ...]: a [C] vector)
    channels[1] = yd[1];
    strides[0] = yd[1];
    conv->post.push_back(op == kAddTensor ? dst : Describe(channels, strides));
    post.append_binary(dnnl::algorithm::binary_add, conv->post.back());
  }
  if (a.transposed) {
    using Kind = dnnl::deconvolution_forward;
    auto pd = Choose<Kind>(src, weights, dst, a, dnnl::algorithm::deconvolution_direct, post);
    Fill<Kind>(*conv, pd, src, weights, dst);
  } else {
    using Kind = dnnl::convolution_forward;
    auto pd = Choose<Kind>(src, weights, dst, a, dnnl::algorithm::convolution_direct, post);
    Fill<Kind>(*conv, pd, src, weights, dst);
  }
  return conv;
}

std::shared_ptr<Convolution> Find(const std::string& key, const ffi::AnyBuffer& x, const ffi::AnyBuffer& w,
                                  const ffi::AnyBuffer& y, const Attrs& a) {
  static std::mutex lock;
  static std::unordered_map<std::string, std::shared_ptr<Convolution>> made;
  {
    std::lock_guard<std::mutex> guard(lock);
    auto it = made.find(key);
    if (it != made.end()) return it->second;
  }
  auto conv = Create(x.dimensions(), w.dimensions(), y.dimensions(), a);
  std::lock_guard<std::mutex> guard(lock);
  return made.emplace(key, conv).first->second;
}

// An operand as oneDNN's convolution reads it: `data` itself, or a copy reordered into its layout.
dnnl::memory In(const Reorder& reorder, void* data, dnnl::stream& stream) {
  dnnl::memory stored(reorder.from, Engine(), data);
  if (!reorder.needed) return stored;
  dnnl::memory preferred(reorder.to, Engine());
  reorder.primitive.execute(stream, stored, preferred);
  return preferred;
}

// What a buffer holds, to tell whether a laid-out copy of it is still its copy: 8 independent 64-bit lanes, each a
// chain of ``h = mix((h ^ word) * odd)`` over every 8th word. Each step is a bijection of ``h`` for a given word, so
// changing any one word changes its lane's result; other changes collide with odds of about 2^-64. The lanes are
// hashed in chunks on oneDNN's threads (TBB's): the weights are read once, at memory speed.
typedef uint64_t __attribute__((may_alias)) Word;  // (the weights' bytes, read as 64-bit words)

struct Fingerprint {
  static constexpr int kLanes = 8;
  static constexpr size_t kChunkWords = size_t{1} << 16;  // (512 KiB: a chunk per thread and step)
  uint64_t lanes[kLanes] = {};
  size_t bytes = 0;

  bool operator==(const Fingerprint& other) const {
    return bytes == other.bytes && std::memcmp(lanes, other.lanes, sizeof lanes) == 0;
  }

  static void Chain(const Word* words, size_t n, uint64_t* lanes) {
    uint64_t h[kLanes];
    for (int l = 0; l < kLanes; ++l) h[l] = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(l + 1);
    for (size_t i = 0; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        uint64_t x = (h[l] ^ words[i + l]) * 0xFF51AFD7ED558CCDull;
        h[l] = x ^ (x >> 29);
      }
    }
    for (int l = 0; l < kLanes; ++l) lanes[l] = h[l];
  }

  // Each chunk's lanes (chunks of whole steps, on TBB's threads), then the bytes after the last whole step
  // (fewer than a step's), chained in order: which chunk a word is in counts.
  static Fingerprint Of(const void* data, size_t bytes) {
    const auto* words = static_cast<const Word*>(data);
    size_t n = bytes / (sizeof(Word) * kLanes) * kLanes, chunks = (n + kChunkWords - 1) / kChunkWords;
    std::vector<uint64_t> parts((chunks + 1) * kLanes, 0);
    auto chain = [&](size_t c) {
      size_t begin = c * kChunkWords;
      Chain(words + begin, std::min(kChunkWords, n - begin), &parts[c * kLanes]);
    };
    tbb::parallel_for(size_t{0}, chunks, chain);
    std::memcpy(&parts[chunks * kLanes], static_cast<const char*>(data) + n * sizeof(Word), bytes - n * sizeof(Word));
    Fingerprint f;
    f.bytes = bytes;
    Chain(parts.data(), parts.size(), f.lanes);
    return f;
  }
};

// The weights in oneDNN's layout, laid out once: a copy kept per convolution and weight buffer, and used while the
// buffer holds what it was made from. The buffer's address alone would not say so: XLA and tripy reuse memory, and
// an argument's buffer may be given other contents between calls. So each call fingerprints the weights (reading
// them once, at memory speed, instead of reordering them: a read and a strided write) and lays them out again where
// they changed, but for a buffer tripy has pinned (``Pin``: an executable's baked-in data, tripy's own copy, never
// written while it lives): its copy is used as it is. Pinning or unpinning an address drops the copies made from it.
// The copies are kept up to kWeightCacheBytes in all, then dropped, oldest first.
constexpr size_t kWeightCacheBytes = size_t{2} << 30;

class WeightCache {
 public:
  static WeightCache& Get() {
    static WeightCache* cache = new WeightCache();  // (never destroyed: convolutions may run during exit)
    return *cache;
  }

  dnnl::memory Weights(const Convolution& conv, const std::string& key, void* data, dnnl::stream& stream) {
    if (!conv.weights.needed) return dnnl::memory(conv.weights.from, Engine(), data);
    auto address = reinterpret_cast<uintptr_t>(data);
    std::string at = key + '@' + std::to_string(address);
    {
      std::lock_guard<std::mutex> guard(lock_);
      auto it = kept_.find(at);
      if (it != kept_.end() && pinned_.count(address)) return it->second.memory;
    }
    Fingerprint now = Fingerprint::Of(data, conv.weights.from.get_size());
    {
      std::lock_guard<std::mutex> guard(lock_);
      auto it = kept_.find(at);
      if (it != kept_.end() && it->second.fingerprint == now) return it->second.memory;
    }
    LaidOut laid{now, In(conv.weights, data, stream), conv.weights.to.get_size(), address};
    stream.wait();
    std::lock_guard<std::mutex> guard(lock_);
    auto it = kept_.find(at);
    if (it != kept_.end()) Drop(it);  // (replaced: a copy of what the buffer held before, or one made at the same time)
    while (total_ + laid.bytes > kWeightCacheBytes && !order_.empty()) Drop(kept_.find(order_.front()));
    if (laid.bytes <= kWeightCacheBytes) {
      total_ += laid.bytes;
      order_.push_back(at);
      kept_.emplace(at, laid);
    }
    return laid.memory;
  }

  void Pin(uintptr_t address) {
    std::lock_guard<std::mutex> guard(lock_);
    if (pinned_[address]++ == 0) Forget(address);
  }

  void Unpin(uintptr_t address) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = pinned_.find(address);
    if (it == pinned_.end() || --it->second > 0) return;
    pinned_.erase(it);
    Forget(address);
  }

  size_t Pinned() {
    std::lock_guard<std::mutex> guard(lock_);
    return pinned_.size();
  }

 private:
  struct LaidOut {
    Fingerprint fingerprint;
    dnnl::memory memory;
    size_t bytes;
    uintptr_t address;  // (of the buffer it was laid out from)
  };
  using Kept = std::unordered_map<std::string, LaidOut>;

  void Drop(Kept::iterator it) {  // (lock_ held)
    total_ -= it->second.bytes;
    order_.remove(it->first);
    kept_.erase(it);
  }

  void Forget(uintptr_t address) {  // (lock_ held)
    for (auto it = kept_.begin(); it != kept_.end();) {
      auto next = std::next(it);
      if (it->second.address == address) Drop(it);
      it = next;
    }
  }

  std::mutex lock_;
  Kept kept_;
  std::list<std::string> order_;  // (oldest first)
  size_t total_ = 0;
  std::unordered_map<uintptr_t, int> pinned_;  // address -> how many pins
};

// `extra`: the data of the epilogue's operands (``Attrs::post``), in order.
ffi::Error Run(ffi::AnyBuffer x, ffi::AnyBuffer w, ffi::Result<ffi::AnyBuffer> y, Attrs a,
               const std::vector<void*>& extra = {}) {
  if (x.element_type() != ffi::F32 || w.element_type() != ffi::F32 || y->element_type() != ffi::F32) {
    return ffi::Error::InvalidArgument("tripy_onednn_convolution_f32: operands must be float32");
  }
  try {
    std::string key = Key(x, w, a);
    auto conv = Find(key, x, w, *y, a);
    dnnl::stream stream(Engine());
    auto src = In(conv->src, x.untyped_data(), stream);
    auto weights = WeightCache::Get().Weights(*conv, key, w.untyped_data(), stream);
    dnnl::memory result(conv->dst.to, Engine(), y->untyped_data());
    dnnl::memory dst = conv->dst.needed ? dnnl::memory(conv->dst.from, Engine()) : result;
    dnnl::memory scratchpad(conv->scratchpad, Engine());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
    for (size_t i = 0, k = 0; i < a.post.size(); ++i) {  // (a binary post-op's operand is its SRC_1)
      if (a.post[i] == kRelu) continue;
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] =
          dnnl::memory(conv->post[k], Engine(), extra[k]);
      ++k;
    }
    conv->primitive.execute(stream, args);
    if (conv->dst.needed) conv->dst.primitive.execute(stream, dst, result);
    stream.wait();
  } catch (const dnnl::error& e) {
    return ffi::Error::Internal(std::string("oneDNN convolution failed: ") + e.what());
  }
  return ffi::Error::Success();
}

ffi::Error Convolve(ffi::AnyBuffer x, ffi::AnyBuffer w, ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> lhs,
                    ffi::Span<const int64_t> rhs, ffi::Span<const int64_t> out, ffi::Span<const int64_t> strides,
                    ffi::Span<const int64_t> pad_lo, ffi::Span<const int64_t> pad_hi,
                    ffi::Span<const int64_t> dilation, int64_t groups, int64_t transposed) {
  return Run(x, w, y, Attrs{lhs, rhs, out, strides, pad_lo, pad_hi, dilation, groups, transposed, {}});
}

// A convolution and the elementwise epilogue `post` (``Post``) fused: `extra` holds its operands, in order.
ffi::Error ConvolveFused(ffi::AnyBuffer x, ffi::AnyBuffer w, ffi::RemainingArgs extra, ffi::Result<ffi::AnyBuffer> y,
                         ffi::Span<const int64_t> lhs, ffi::Span<const int64_t> rhs, ffi::Span<const int64_t> out,
                         ffi::Span<const int64_t> strides, ffi::Span<const int64_t> pad_lo,
                         ffi::Span<const int64_t> pad_hi, ffi::Span<const int64_t> dilation, int64_t groups,
                         int64_t transposed, ffi::Span<const int64_t> post) {
  std::vector<void*> data;
  size_t channels = static_cast<size_t>(y->dimensions()[out[1]]);
  for (int64_t op : post) {
    if (op == kRelu) continue;
    auto operand = extra.get<ffi::AnyBuffer>(data.size());
    size_t expected = op == kAddTensor ? y->element_count() : channels;
    if (!operand.has_value() || operand->element_type() != ffi::F32 || operand->element_count() != expected) {
      return ffi::Error::InvalidArgument("tripy_onednn_convolution_post_f32: an epilogue operand does not match");
    }
    data.push_back(operand->untyped_data());
  }
  if (data.size() != extra.size()) {
    return ffi::Error::InvalidArgument("tripy_onednn_convolution_post_f32: more operands than the epilogue reads");
  }
  return Run(x, w, y, Attrs{lhs, rhs, out, strides, pad_lo, pad_hi, dilation, groups, transposed, post}, data);
}

// The attributes both handlers read after their operands and result (``Attrs``).
template <typename Binding>
auto ConvolutionAttrs(Binding&& binding) {
  return std::move(binding)
      .template Attr<ffi::Span<const int64_t>>("lhs")
      .template Attr<ffi::Span<const int64_t>>("rhs")
      .template Attr<ffi::Span<const int64_t>>("out")
      .template Attr<ffi::Span<const int64_t>>("strides")
      .template Attr<ffi::Span<const int64_t>>("pad_lo")
      .template Attr<ffi::Span<const int64_t>>("pad_hi")
      .template Attr<ffi::Span<const int64_t>>("dilation")
      .template Attr<int64_t>("groups")
      .template Attr<int64_t>("transposed");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(TripyOnednnConvolutionF32, Convolve,
                              ConvolutionAttrs(
                                  ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>()));

XLA_FFI_DEFINE_HANDLER_SYMBOL(TripyOnednnConvolutionPostF32, ConvolveFused,
                              ConvolutionAttrs(ffi::Ffi::Bind()
                                                   .Arg<ffi::AnyBuffer>()
                                                   .Arg<ffi::AnyBuffer>()
                                                   .RemainingArgs()
                                                   .Ret<ffi::AnyBuffer>())
                                  .Attr<ffi::Span<const int64_t>>("post"));

XLA_FFI_DECLARE_HANDLER_SYMBOL(TripyGroupNormF32);     // (csrc/group_norm.cc)
XLA_FFI_DECLARE_HANDLER_SYMBOL(TripyOnednnMaxPoolF32);  // (csrc/pooling.cc)

// ---- the Python module: the handlers as capsules, by target name ----------------------------------------------

static PyObject* Handlers(PyObject*, PyObject*) {
  const std::pair<const char*, void*> handlers[] = {
      {"tripy_onednn_convolution_f32", reinterpret_cast<void*>(&TripyOnednnConvolutionF32)},
      {"tripy_onednn_convolution_post_f32", reinterpret_cast<void*>(&TripyOnednnConvolutionPostF32)},
      {"tripy_group_norm_f32", reinterpret_cast<void*>(&TripyGroupNormF32)},
      {"tripy_onednn_max_pool_f32", reinterpret_cast<void*>(&TripyOnednnMaxPoolF32)},
  };
  PyObject* result = PyDict_New();
  for (const auto& [name, handler] : handlers) {
    PyObject* capsule = result == nullptr ? nullptr : PyCapsule_New(handler, nullptr, nullptr);
    if (capsule == nullptr || PyDict_SetItemString(result, name, capsule) != 0) {
      Py_XDECREF(capsule);
      Py_XDECREF(result);
      return nullptr;
    }
    Py_DECREF(capsule);
  }
  return result;
}

static PyObject* OnednnVersion(PyObject*, PyObject*) {
  const dnnl_version_t* v = dnnl_version();
  return PyUnicode_FromFormat("%d.%d.%d", v->major, v->minor, v->patch);
}

// fast(x_shape, w_shape, y_shape, lhs, rhs, out, strides, pad_lo, pad_hi, dilation, groups, transposed[, post]):
// whether oneDNN runs this convolution (the handler's attributes; `post`: a fused epilogue) with an optimized
// kernel, not only a reference one.
static bool Ints(PyObject* sequence, std::vector<int64_t>& out) {
  PyObject* fast = PySequence_Fast(sequence, "expected a sequence of ints");
  if (fast == nullptr) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    out.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i)));
  }
  Py_DECREF(fast);
  return !PyErr_Occurred();
}

static PyObject* Fast(PyObject*, PyObject* args) {
  PyObject* seqs[11] = {};
  long long groups, transposed;
  if (!PyArg_ParseTuple(args, "OOOOOOOOOOLL|O", &seqs[0], &seqs[1], &seqs[2], &seqs[3], &seqs[4], &seqs[5], &seqs[6],
                        &seqs[7], &seqs[8], &seqs[9], &groups, &transposed, &seqs[10])) {
    return nullptr;
  }
  std::vector<int64_t> v[11];
  for (int k = 0; k < 11; ++k) {
    if (seqs[k] != nullptr && !Ints(seqs[k], v[k])) return nullptr;
  }
  auto span = [&](int k) { return ffi::Span<const int64_t>(v[k].data(), v[k].size()); };
  Attrs a{span(3), span(4), span(5), span(6), span(7), span(8), span(9), groups, transposed, span(10)};
  try {
    return PyBool_FromLong(!Create(span(0), span(1), span(2), a)->reference);
  } catch (const dnnl::error& e) {
    return PyBool_FromLong(0);  // (oneDNN cannot run it at all)
  }
}

static bool Address(PyObject* args, uintptr_t& address) {
  unsigned long long value;
  if (!PyArg_ParseTuple(args, "K", &value)) return false;
  address = static_cast<uintptr_t>(value);
  return true;
}

static PyObject* Pin(PyObject*, PyObject* args) {
  uintptr_t address;
  if (!Address(args, address)) return nullptr;
  WeightCache::Get().Pin(address);
  Py_RETURN_NONE;
}

static PyObject* Unpin(PyObject*, PyObject* args) {
  uintptr_t address;
  if (!Address(args, address)) return nullptr;
  WeightCache::Get().Unpin(address);
  Py_RETURN_NONE;
}

static PyObject* Pinned(PyObject*, PyObject*) { return PyLong_FromSize_t(WeightCache::Get().Pinned()); }

static PyMethodDef kMethods[] = {
    {"fast", Fast, METH_VARARGS, "Whether oneDNN has an optimized (not a reference) kernel for this convolution."},
    {"handlers", Handlers, METH_NOARGS, "The XLA FFI handlers (capsules), by custom-call target name."},
    {"onednn_version", OnednnVersion, METH_NOARGS, "The version of the oneDNN library loaded."},
    {"pin", Pin, METH_VARARGS, "Weights at this address stay as they are until unpinned: not fingerprinted."},
    {"unpin", Unpin, METH_VARARGS, "Undo one pin of this address."},
    {"pinned", Pinned, METH_NOARGS, "How many addresses are pinned."},
    {nullptr, nullptr, 0, nullptr}};

static PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_native", "tripy-kernels' native handlers.", -1, kMethods};

PyMODINIT_FUNC PyInit__native() { return PyModule_Create(&kModule); }
