#include "compiler/library/gemm_bf16.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/library/gemm.h"
#include "compiler/library/parallel.h"
#include "debug/config.h"
#include "metrics/metrics.h"
#include "runtime/buffer.h"
#include "runtime/scalar_ops.h"

#ifdef TXLA_WITH_ONEDNN
#include "compiler/library/onednn.h"
#endif

namespace txla::compiler::library {
namespace {

// The f32 path: operands widened (exactly), then the f32 GEMM.
void WidenedGemm(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                 int64_t stride_a, const uint16_t* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                 int64_t stride_c) {
  // Every element the products read: `batch` blocks of `rows` rows of `cols` elements, rows `ld`
  // apart (A is m x k as stored, k x m when transposed; B likewise).
  auto widen = [batch](const uint16_t* x, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    int64_t extent = (batch - 1) * stride + (rows - 1) * ld + cols;
    std::vector<float> out(static_cast<size_t>(extent));
    for (int64_t i = 0; i < extent; ++i) out[i] = txla_bf16_to_float(x[i]);
    return out;
  };
  std::vector<float> wa = ta ? widen(a, k, m, lda, stride_a) : widen(a, m, k, lda, stride_a);
  std::vector<float> wb = tb ? widen(b, n, k, ldb, stride_b) : widen(b, k, n, ldb, stride_b);
  GemmBatched<float>(batch, ta, tb, m, n, k, wa.data(), lda, stride_a, wb.data(), ldb, stride_b, c, ldc, stride_c);
}

#ifdef TXLA_WITH_ONEDNN

using dnnl::memory;

using onednn::Engine;

struct Plan {
  dnnl::matmul primitive;
  memory::desc a, b, c, scratchpad;
};

// A matmul whose operands are described by their strides (transposes and leading dimensions
// included), or null when oneDNN has only its reference kernel for it on this CPU (no bf16
// instructions): the widened f32 GEMM is faster than that. Built for one OpenMP thread: the
// products are split over the library's own threads (below), as the f32 GEMM is.
std::shared_ptr<Plan> MakePlan(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                               int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t ldc, int64_t stride_c) {
  auto plan = std::make_shared<Plan>();
  const auto bf16 = memory::data_type::bf16, f32 = memory::data_type::f32;
  // A single product is described in 2-D: oneDNN 2.6 multiplies a 3-D batch of one with a
  // transposed B wrongly (measured: errors of the operands' size).
  auto desc = [batch](memory::dims dims, memory::data_type type, memory::dim stride, memory::dims strides) {
    if (batch == 1) return memory::desc(dims, type, strides);
    dims.insert(dims.begin(), batch);
    strides.insert(strides.begin(), stride);
    return memory::desc(dims, type, strides);
  };
  plan->a = desc({m, k}, bf16, stride_a, ta ? memory::dims{1, lda} : memory::dims{lda, 1});
  plan->b = desc({k, n}, bf16, stride_b, tb ? memory::dims{1, ldb} : memory::dims{ldb, 1});
  plan->c = desc({m, n}, f32, stride_c, memory::dims{ldc, 1});
  // Parts of one product run at once on the library's threads, possibly through the same
  // primitive: each execution brings its own scratchpad (oneDNN's default one is shared, and
  // concurrent parts overwrote each other's: the GPT decoder's bf16 loss went wrong at step 2).
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plan->a, plan->b, plan->c), attr, Engine());
  if (onednn::IsReferenceKernel(pd.impl_info_str())) return nullptr;
  plan->scratchpad = pd.scratchpad_desc();
  plan->primitive = dnnl::matmul(pd);
  return plan;
}

// One part of a product on the calling thread, with oneDNN's OpenMP held to that thread: its
// own team of two on two cores was measured 50x slower on some shapes (512x128x128: 1298 us
// against 26 us on one thread) and never faster than splitting here.
bool OneDnnPart(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                int64_t stride_a, const uint16_t* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                int64_t stride_c) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  UseOneOpenMpThread();
  std::shared_ptr<Plan> plan;
  {
    std::vector<int64_t> key{batch, ta, tb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c};
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it == plans.end()) {
      try {
        plan = MakePlan(batch, ta, tb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c);
      } catch (const dnnl::error&) {
        plan = nullptr;
      }
      it = plans.emplace(std::move(key), plan).first;
    }
    plan = it->second;
  }
  if (!plan) return false;
  dnnl::stream stream(Engine());
  memory ma(plan->a, Engine(), const_cast<uint16_t*>(a)), mb(plan->b, Engine(), const_cast<uint16_t*>(b)),
      mc(plan->c, Engine(), c);
  runtime::PooledBlock scratch(plan->scratchpad.get_size());
  memory ms(plan->scratchpad, Engine(), scratch.data());
  plan->primitive.execute(stream,
                          {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, ms}});
  stream.wait();
  return true;
}

// Below this many multiply-adds a product runs on one thread (AMX does 512x128x128, 8.4M, in
// 26 us on one core: a second thread's hand-off costs more than it saves).
constexpr double kParallelWork = 16e6;

bool OneDnnGemm(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                int64_t stride_a, const uint16_t* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                int64_t stride_c) {
  const double work = static_cast<double>(batch) * m * n * k;
  const int threads = work < kParallelWork ? 1 : NumThreads();
  if (threads == 1)
    return OneDnnPart(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
  // Whole products to each thread, or one product's rows (its columns when the product is too
  // short to give each thread a 16-row block, or when A is transposed and the product wide); a
  // part that oneDNN cannot run makes the whole product take the widened path. The parts are
  // fixed by the product's shape and the configured thread count, and each is its own call: how
  // many threads take them (one, while the host traces the next step) must not change a part's
  // shape, whose blocking decides the order of its sums (the bf16 GPT decoder's loss differed
  // from run to run).
  std::atomic<bool> ok{true};
  auto each_part = [&](int64_t parts, const std::function<bool(int64_t)>& part) {
    ParallelChunks(parts, threads, [&](int, int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        if (!part(p)) ok = false;
    });
  };
  if (batch > 1) {
    int64_t step = (batch + threads - 1) / threads;
    each_part((batch + step - 1) / step, [&](int64_t p) {
      int64_t b0 = p * step, b1 = std::min<int64_t>(batch, b0 + step);
      return OneDnnPart(b1 - b0, ta, tb, m, n, k, a + b0 * stride_a, lda, stride_a, b + b0 * stride_b, ldb, stride_b,
                        c + b0 * stride_c, ldc, stride_c);
    });
  } else if (ta ? n >= m : m < 16 * threads) {
    // oneDNN 2.6 runs its AMX matmul only on dense operands (leading dimensions equal to their
    // extents): a part of a row split is dense where A is not transposed, a column split's part
    // of C never is, and its other kernel is several times slower on shallow products (a 2-core
    // Xeon with AMX, one thread: 512x4608x64 as two 512x2304 column parts 897 us each, as two
    // 256x4608 row parts 310 us each).
    int64_t step = ((n + threads - 1) / threads + 31) / 32 * 32;  // whole AMX tile columns per part
    each_part((n + step - 1) / step, [&](int64_t p) {
      int64_t j0 = p * step, j1 = std::min<int64_t>(n, j0 + step);
      return OneDnnPart(1, ta, tb, m, j1 - j0, k, a, lda, stride_a, tb ? b + j0 * ldb : b + j0, ldb, stride_b, c + j0,
                        ldc, stride_c);
    });
  } else {
    int64_t step = ((m + threads - 1) / threads + 15) / 16 * 16;
    each_part((m + step - 1) / step, [&](int64_t p) {
      int64_t i0 = p * step, i1 = std::min<int64_t>(m, i0 + step);
      return OneDnnPart(1, ta, tb, i1 - i0, n, k, ta ? a + i0 : a + i0 * lda, lda, stride_a, b, ldb, stride_b,
                        c + i0 * ldc, ldc, stride_c);
    });
  }
  return ok;
}

#else

bool OneDnnGemm(int64_t, bool, bool, int64_t, int64_t, int64_t, const uint16_t*, int64_t, int64_t, const uint16_t*,
                int64_t, int64_t, float*, int64_t, int64_t) {
  return false;
}

#endif

}  // namespace

void GemmBatchedBf16(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a,
                     int64_t lda, int64_t stride_a, const uint16_t* b, int64_t ldb, int64_t stride_b, float* c,
                     int64_t ldc, int64_t stride_c) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t r = 0; r < m; ++r) std::memset(c + i * stride_c + r * ldc, 0, sizeof(float) * n);
    return;
  }
  if (debug::GetConfig().gemm_bf16_library == "onednn" && OneDnnGemm(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c)) {
    TXLA_COUNTER("OneDnnGemmBf16", 1);
    return;
  }
  TXLA_COUNTER("GemmBf16Widened", 1);
  WidenedGemm(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
}

}  // namespace txla::compiler::library
