// tripy-kernels: XLA FFI handler `tripy_group_norm_f32`, a GroupNorm of channels-last activations (float32) with
// its per-channel scale and shift, and optionally the SiLU after it, in one call on TBB's threads (oneDNN's pool).
//
// Operands: x, [N, *spatial, C] row-major, read as [N, P, C]; gamma, beta: [C]; then three float32 scalars as the
// program computes them (eager programs pass them as arguments): what divides each group's sum to make its mean
// (k1), what divides its squared deviations from that mean to make its variance (k2), and eps. Attributes:
// `groups` (G, dividing C), `silu` (0 or 1). With n values a group, mean = sum / k1, var = sum((x - mean)^2) / k2
// (a GroupNorm's are n and n), y = (x - mean) / sqrt(var + eps) * gamma + beta, then y * sigmoid(y) where `silu`.
//
// Two passes over x. The first splits each image's rows into chunks and, per chunk and group, takes the mean and
// the sum of squared deviations from it (two sweeps of the chunk while it is in cache; no cancellation as in
// sum(x^2) - n mean^2); the chunks' figures then combine (Chan et al.'s pairwise update, in double). The second
// writes (x - mean) * a[c] + beta[c] (a = gamma / sqrt(var + eps), per image and channel), then the SiLU.
// oneDNN 3.2, the one on PyPI, has no group normalization primitive (3.3 added it), and XLA:CPU runs these loops
// on one core, storing the squared deviations first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "oneapi/tbb/parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The loops compiled for AVX-512, AVX2 and plain x86-64, the one for the CPU picked at load (GCC's and Clang's
// function multiversioning); as written elsewhere.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TRIPY_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TRIPY_VECTOR_CLONES
#endif

constexpr int64_t kChunkElements = 16384;  // (64 KiB of float32: a chunk's two sweeps stay in L2)

// e^x, vectorizable (no library call, no branch): x = n ln2 + r, |r| <= ln2 / 2, e^r by its Taylor polynomial to
// r^7 / 7! (relative error below 2e-7 on that interval), 2^n built in the exponent bits. x is clamped to
// [-87, 88], where 2^n stays a normal float.
inline float Exp(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer, kept in the low mantissa bits
  float t = x * 1.44269504f + shifter;
  float n = t - shifter;
  int32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  int32_t k = bits - 0x4B400000;  // (the bits of `shifter`: k == n)
  float r = x - n * 0.693145752f - n * 1.42860677e-6f;  // (ln 2 in two parts: the first exact times small n)
  float p = 1.0f / 720 + r * (1.0f / 5040);
  p = 1.0f / 24 + r * (1.0f / 120 + r * p);
  p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * p)));
  int32_t scale_bits = (k + 127) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

struct Moments {  // of one group's values in one chunk, or combined
  double count = 0, mean = 0, m2 = 0;  // (m2: the sum of squared deviations from the mean)

  void Add(const Moments& o) {
    double total = count + o.count, delta = o.mean - mean;
    if (total == 0) return;
    mean += delta * o.count / total;
    m2 += o.m2 + delta * delta * count * o.count / total;
    count = total;
  }
};

// One chunk's moments, per group: `rows` rows of `c` channels at `x`, `cg` channels a group. `scratch`: 2 c floats.
TRIPY_VECTOR_CLONES void ChunkMoments(const float* __restrict x, int64_t rows, int64_t c, int64_t cg,
                                      float* __restrict scratch, Moments* out) {
  float* sums = scratch;
  float* centers = scratch + c;
  std::fill(sums, sums + c, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * c;
    for (int64_t j = 0; j < c; ++j) sums[j] += row[j];
  }
  double per_group = static_cast<double>(rows * cg);
  for (int64_t g = 0; g * cg < c; ++g) {
    double s = 0;
    for (int64_t j = g * cg; j < (g + 1) * cg; ++j) s += sums[j];
    out[g].count = per_group;
    out[g].mean = s / per_group;
    for (int64_t j = g * cg; j < (g + 1) * cg; ++j) centers[j] = static_cast<float>(out[g].mean);
  }
  std::fill(sums, sums + c, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * c;
    for (int64_t j = 0; j < c; ++j) {
      float d = row[j] - centers[j];
      sums[j] += d * d;
    }
  }
  for (int64_t g = 0; g * cg < c; ++g) {
    double s = 0;
    for (int64_t j = g * cg; j < (g + 1) * cg; ++j) s += sums[j];
    double off = out[g].mean - centers[g * cg];  // (the center is the mean rounded to float)
    out[g].m2 = std::max(0.0, s - per_group * off * off);
  }
}

// y = (x - m) * a + b per channel over `rows` rows of `c` channels, then y * sigmoid(y) where `silu`. (Not x * a +
// (b - m * a): where the mean is large next to the spread, that sum of two large terms loses the digits that the
// subtraction, exact for close values, keeps.)
TRIPY_VECTOR_CLONES void Normalize(const float* __restrict x, float* __restrict y, int64_t rows, int64_t c,
                                   const float* __restrict m, const float* __restrict a, const float* __restrict b,
                                   bool silu) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * c;
    float* out = y + r * c;
    if (silu) {
      for (int64_t j = 0; j < c; ++j) {
        float v = (in[j] - m[j]) * a[j] + b[j];
        out[j] = v / (1.0f + Exp(-v));
      }
    } else {
      for (int64_t j = 0; j < c; ++j) out[j] = (in[j] - m[j]) * a[j] + b[j];
    }
  }
}

ffi::Error GroupNorm(ffi::AnyBuffer x, ffi::AnyBuffer gamma, ffi::AnyBuffer beta, ffi::AnyBuffer k1,
                     ffi::AnyBuffer k2, ffi::AnyBuffer eps, ffi::Result<ffi::AnyBuffer> y, int64_t groups,
                     int64_t silu) {
  auto dims = x.dimensions();
  for (const ffi::AnyBuffer* b : {&x, &gamma, &beta, &k1, &k2, &eps}) {
    if (b->element_type() != ffi::F32) {
      return ffi::Error::InvalidArgument("tripy_group_norm_f32: operands must be float32");
    }
  }
  if (y->element_type() != ffi::F32 || dims.size() < 2 || y->element_count() != x.element_count()) {
    return ffi::Error::InvalidArgument("tripy_group_norm_f32: x must be [N, ..., C] and y of its shape");
  }
  const int64_t n = dims[0], c = dims[dims.size() - 1];
  if (groups <= 0 || c % groups != 0 || static_cast<int64_t>(gamma.element_count()) != c ||
      static_cast<int64_t>(beta.element_count()) != c) {
    return ffi::Error::InvalidArgument("tripy_group_norm_f32: groups must divide C, gamma and beta be [C]");
  }
  if (k1.element_count() != 1 || k2.element_count() != 1 || eps.element_count() != 1) {
    return ffi::Error::InvalidArgument("tripy_group_norm_f32: the divisors and eps must be scalars");
  }
  if (x.element_count() == 0) return ffi::Error::Success();
  const double mean_divisor = *static_cast<const float*>(k1.untyped_data());
  const double var_divisor = *static_cast<const float*>(k2.untyped_data());
  const double epsilon = *static_cast<const float*>(eps.untyped_data());
  const int64_t p = static_cast<int64_t>(x.element_count()) / (n * c), cg = c / groups;
  const int64_t rows = std::max<int64_t>(1, kChunkElements / c), per_image = (p + rows - 1) / rows;
  const auto* in = static_cast<const float*>(x.untyped_data());
  auto* out = static_cast<float*>(y->untyped_data());

  std::vector<Moments> parts(static_cast<size_t>(n * per_image * groups));
  tbb::parallel_for(int64_t{0}, n * per_image, [&](int64_t k) {
    int64_t image = k / per_image, first = (k % per_image) * rows, count = std::min(rows, p - first);
    std::vector<float> scratch(static_cast<size_t>(2 * c));
    ChunkMoments(in + (image * p + first) * c, count, c, cg, scratch.data(), &parts[k * groups]);
  });
  std::vector<float> center(static_cast<size_t>(n * c)), scale(center.size()), shift(center.size());
  const auto* g = static_cast<const float*>(gamma.untyped_data());
  const auto* b = static_cast<const float*>(beta.untyped_data());
  for (int64_t image = 0; image < n; ++image) {
    for (int64_t group = 0; group < groups; ++group) {
      Moments m;
      for (int64_t k = 0; k < per_image; ++k) m.Add(parts[(image * per_image + k) * groups + group]);
      double mean = m.mean * m.count / mean_divisor, off = m.mean - mean;
      double rstd = 1.0 / std::sqrt((m.m2 + m.count * off * off) / var_divisor + epsilon);
      for (int64_t j = group * cg; j < (group + 1) * cg; ++j) {
        center[image * c + j] = static_cast<float>(mean);
        scale[image * c + j] = static_cast<float>(rstd * g[j]);
        shift[image * c + j] = b[j];
      }
    }
  }
  tbb::parallel_for(int64_t{0}, n * per_image, [&](int64_t k) {
    int64_t image = k / per_image, first = (k % per_image) * rows, count = std::min(rows, p - first);
    int64_t at = (image * p + first) * c;
    Normalize(in + at, out + at, count, c, &center[image * c], &scale[image * c], &shift[image * c], silu != 0);
  });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(TripyGroupNormF32, GroupNorm,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("groups")
                                  .Attr<int64_t>("silu"));
