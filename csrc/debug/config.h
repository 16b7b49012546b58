// Every environment switch of the device, declared once: its variable, type, default, whether it
// changes generated code, and what it does. The process reads them once (at first use, which the
// Python module's import makes early) into one Config; code asks GetConfig(), never getenv.
//
// Switches that change generated code form CodegenKey(), which is part of the in-memory and the
// persistent compile-cache keys, so flipping one never serves kernels built under the other value.
// ReloadConfig() re-reads the environment (torch_xla._XLAC._xla_reload_config; tests use it after
// setting a variable): references handed out earlier stay valid and keep the values they had.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace txla::debug {

// V(type, field, "VARIABLE", default, changes_codegen, "what it does")
#define TXLA_CONFIG_SWITCHES(V)                                                                   \
  V(bool, sync_wait, "XLA_SYNC_WAIT", false, false, "every barrier waits for its graphs to finish") \
  V(int64_t, max_inflight_steps, "XLA_MAX_INFLIGHT_STEPS", 2, false,                              \
    "graphs that may wait in a device's queue")                                                   \
  V(bool, sync_tensors_opbyop, "SYNC_TENSORS_OPBYOP", false, false,                               \
    "barriers run their graphs on the interpreter")                                               \
  V(bool, get_tensors_opbyop, "GET_TENSORS_OPBYOP", false, false,                                 \
    "host reads run their graphs on the interpreter")                                             \
  V(bool, ir_debug, "XLA_IR_DEBUG", false, false,                                                 \
    "each IR node keeps the Python frames that created it")                                       \
  V(bool, pt_xla_debug, "PT_XLA_DEBUG", false, false,                                            \
    "explain every compilation (cause, user frame, what differs from the nearest cached graph) "   \
    "and mid-step value reads; alone, every analysis (PyTorch/XLA's level 100)")                  \
  V(int64_t, pt_xla_debug_level, "PT_XLA_DEBUG_LEVEL", 0, false,                                  \
    "1: compilation analysis; 2: also an execution analysis of every graph run")                  \
  V(int64_t, pt_xla_debug_max_frame, "PT_XLA_DEBUG_MAX_FRAME", 8, false,                           \
    "Python frames the debug analyses show per graph (more are marked ..........)")              \
  V(std::string, pt_xla_debug_file, "PT_XLA_DEBUG_FILE", "", false,                               \
    "append the debug analyses to this file instead of standard error")                           \
  V(bool, use_bf16, "XLA_USE_BF16", false, true,                                                  \
    "float32 and float64 tensors are stored and computed as bfloat16 on the device (their "       \
    "PyTorch dtype is kept)")                                                                     \
  V(bool, downcast_bf16, "XLA_DOWNCAST_BF16", false, true,                                        \
    "float32 is bfloat16 and float64 is float32 on the device")                                   \
  V(bool, use_32bit_long, "XLA_USE_32BIT_LONG", false, true, "int64 is computed as int32 on the device") \
  V(bool, hlo_debug, "XLA_HLO_DEBUG", false, true,                                                \
    "HLO instructions carry the lazy IR op and the user's source line (metadata=...), and "       \
    "generated kernels name the lines they compute")                                              \
  V(bool, no_special_scalars, "XLA_NO_SPECIAL_SCALARS", false, false,                             \
    "0 and 1 become graph parameters like other scalars (the graph hash shows it)")               \
  V(std::string, save_tensors_file, "XLA_SAVE_TENSORS_FILE", "", false,                           \
    "append every executed IR graph to this file")                                                \
  V(bool, dump_post_optimizations, "XLA_DUMP_POST_OPTIMIZATIONS", false, false,                    \
    "HLO dumps (_get_xla_tensors_hlo) show the program after the compiler's passes: under SPMD, " \
    "partitioned, with its collectives (read when a dump is made)")                              \
  V(std::string, save_tensors_fmt, "XLA_SAVE_TENSORS_FMT", "text", false,                         \
    "format of those dumps: text (lazy IR), dot (Graphviz) or hlo")                               \
  V(int64_t, compilation_cache_size, "XLA_COMPILATION_CACHE_SIZE", 1024, false,                   \
    "in-memory compile cache capacity (graphs)")                                                  \
  V(int64_t, buffer_pool_bytes, "XLA_BUFFER_POOL_BYTES", int64_t{1} << 30, false,                 \
    "bytes of freed device buffers kept for reuse")                                               \
  V(int64_t, device_data_cache_size, "XLA_DEVICE_DATA_CACHE_SIZE", 128, false,                  \
    "distinct scalar values whose device buffers are kept and shared by every use (0: none)")     \
  V(int64_t, cpu_num_devices, "CPU_NUM_DEVICES", 1, false, "xla devices this process offers")     \
  V(bool, use_eager_debug_mode, "XLA_USE_EAGER_DEBUG_MODE", false, false,                         \
    "every op is compiled and run as it is called (eager mode; torch_xla.experimental.eager_mode)") \
  V(bool, auto_spmd, "XLA_AUTO_SPMD", false, false,                                                \
    "SPMD with auto-sharding: the compiler chooses layouts for parameters left unsharded")        \
  V(std::string, auto_spmd_mesh, "XLA_AUTO_SPMD_MESH", "", false,                                 \
    "mesh axes auto-sharding may split dimensions over, e.g. 2,2 (default: all devices in one); "  \
    "read at each compilation")                                                                   \
  V(bool, use_spmd, "XLA_USE_SPMD", false, false,                                                 \
    "programs traced on xla:0 are partitioned over every device by their shardings (SPMD)")       \
  V(std::string, persistent_cache_path, "XLA_PERSISTENT_CACHE_PATH", "", false,                   \
    "directory of the on-disk compile cache")                                                     \
  V(bool, persistent_cache_read_only, "XLA_PERSISTENT_CACHE_READ_ONLY", false, false,             \
    "read the on-disk cache, never write it")                                                     \
  V(int64_t, persistent_cache_max_mb, "XLA_PERSISTENT_CACHE_MAX_MB", 2048, false,                 \
    "size cap of the on-disk cache; the oldest kernels are evicted")                              \
  V(int64_t, num_threads, "TXLA_NUM_THREADS", 0, false,                                           \
    "threads for library calls and large kernels (0: every core; read at first use)")             \
  V(std::string, conv_library, "TXLA_CONV_LIBRARY", "onednn", false,                              \
    "float32 convolutions: onednn (when built with it) or im2col (im2col + OpenBLAS)")            \
  V(int64_t, conv_winograd_min, "TXLA_CONV_WINOGRAD_MIN", 16, false,                              \
    "where reduced precision is allowed (torch_xla.backends.set_mat_mul_precision, "             \
    "torch.set_float32_matmul_precision, torch.backends.mkldnn.conv.fp32_precision), float32 "    \
    "3x3 stride-1 convolutions with outputs at least this wide and high run oneDNN's Winograd "   \
    "kernels where the CPU has them (AVX-512); 0: never")                                          \
  V(std::string, conv_loop_kernels, "TXLA_CONV_LOOP_KERNELS", "auto", true,                       \
    "the convolution loop kernels that hold AVX-512's register file (gradients of convolutions "  \
    "of few input channels, every pass on images of at most 4x4): on, off, or auto: on CPUs with " \
    "AVX-512 (oneDNN takes those convolutions elsewhere)")                                         \
  V(std::string, gemm_library, "TXLA_GEMM_LIBRARY", "auto", false,                                \
    "float32 products: mkl (PyPI's MKL), onednn, openblas, or auto: mkl on CPUs without AVX-512 "  \
    "(fastest measured on an EPYC Milan), onednn on those with it; each falls back when absent")   \
  V(std::string, mkl_library, "TXLA_MKL_LIBRARY", "", false,                                      \
    "path of MKL's libmkl_rt.so.2 (torch_xla sets it to the installed PyPI mkl; empty: no MKL)")   \
  V(std::string, gemm_bf16_library, "TXLA_GEMM_BF16_LIBRARY", "onednn", false,                    \
    "bf16 products (autocast): onednn (AMX/AVX512-BF16 kernels, when built with it and the CPU "  \
    "has them) or widened (operands widened, f32 GEMM)")                                          \
  V(std::string, cxx, "TXLA_CXX", "c++", true, "the C++ compiler that builds generated kernels")  \
  V(std::string, disable_passes, "TXLA_DISABLE_PASSES", "", true,                                 \
    "comma-separated compiler passes to turn off, to bisect a miscompile")                        \
  V(std::string, dump_passes, "TXLA_DUMP_PASSES", "", false,                                      \
    "append the HLO module after every compiler pass to this file")                               \
  V(int64_t, flat_kernels, "TXLA_FLAT_KERNELS", 1, true,                                          \
    "loop kernels that read only at their own offset or scalars: 1 (default) one kernel with "     \
    "its length as an argument where a graph runs its body at two or more lengths; 0 never; 2 "  \
    "always")                                                                                     \
  V(bool, profile_kernels, "TXLA_PROFILE_KERNELS", false, true,                                   \
    "time every generated kernel into metrics KernelTime:<kernel>")                               \
  V(bool, check_graphs, "TXLA_CHECK_GRAPHS", false, false,                                        \
    "checked mode: every compiled graph also runs on the interpreter")                            \
  V(std::string, test_miscompile, "TXLA_TEST_MISCOMPILE", "", true,                               \
    "deliberately lower this aten op off by one (tests the checked mode)")                        \
  V(std::string, xla_flags, "XLA_FLAGS", "", true,                                                \
    "XLA's flags; --xla_allow_excess_precision=true is read: 16-bit float arithmetic then stays "  \
    "f32 from one op to the next instead of being rounded after each op as eager rounds it")

struct Config {
#define TXLA_CONFIG_FIELD(type, field, variable, default_value, codegen, doc) type field = default_value;
  TXLA_CONFIG_SWITCHES(TXLA_CONFIG_FIELD)
#undef TXLA_CONFIG_FIELD

  // The switches that change generated code, as "VARIABLE=value|...": part of compile-cache keys
  // (every sync uses it: made once, when the environment is read).
  const std::string& CodegenKey() const { return codegen_key; }
  std::string codegen_key;

  // XLA_FLAGS' --xla_allow_excess_precision (default false here, as eager rounds each op's
  // 16-bit result; XLA's own default is true).
  bool allow_excess_precision = false;
};

// The process's switches, read from the environment at the first call.
const Config& GetConfig();
// Re-reads the environment; returns the new configuration.
const Config& ReloadConfig();

struct SwitchDescription {
  std::string variable, type, value, doc;
  bool changes_codegen;
};
// Every switch with its current value (torch_xla._XLAC._xla_config, and the README's table).
std::vector<SwitchDescription> DescribeConfig();

}  // namespace txla::debug
