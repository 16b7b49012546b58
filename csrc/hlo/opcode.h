// The closed set of HLO instructions, declared once: enum value, XLA text name, and kind.
#pragma once

#include <string_view>

namespace txla::hlo {

// V(enum, "text name", kind)
#define TXLA_HLO_OPCODES(V)                                   \
  V(kParameter, "parameter", kOther)                          \
  V(kConstant, "constant", kOther)                            \
  V(kIota, "iota", kOther)                                    \
  V(kAbs, "abs", kUnary)                                      \
  V(kNegate, "negate", kUnary)                                \
  V(kExp, "exponential", kUnary)                              \
  V(kExpm1, "exponential-minus-one", kUnary)                  \
  V(kLog, "log", kUnary)                                      \
  V(kLog1p, "log-plus-one", kUnary)                           \
  V(kSqrt, "sqrt", kUnary)                                    \
  V(kRsqrt, "rsqrt", kUnary)                                  \
  V(kSin, "sine", kUnary)                                     \
  V(kCos, "cosine", kUnary)                                   \
  V(kTan, "tan", kUnary)                                      \
  V(kTanh, "tanh", kUnary)                                    \
  V(kLogistic, "logistic", kUnary)                            \
  V(kErf, "erf", kUnary)                                      \
  V(kFloor, "floor", kUnary)                                  \
  V(kCeil, "ceil", kUnary)                                    \
  V(kRoundNearestEven, "round-nearest-even", kUnary)          \
  V(kSign, "sign", kUnary)                                    \
  V(kNot, "not", kUnary)                                      \
  V(kIsFinite, "is-finite", kUnary)                           \
  /* Not in XLA's HLO (its client library expands them): ours, computed by libm or the prelude. */ \
  V(kLgamma, "lgamma", kUnary)                                \
  V(kDigamma, "digamma", kUnary)                              \
  V(kAcosh, "acosh", kUnary)                                  \
  V(kAsinh, "asinh", kUnary)                                  \
  V(kAtanh, "atanh", kUnary)                                  \
  V(kErfInv, "erf-inv", kUnary)                               \
  V(kAdd, "add", kBinary)                                     \
  V(kSubtract, "subtract", kBinary)                           \
  V(kMultiply, "multiply", kBinary)                           \
  V(kDivide, "divide", kBinary)                               \
  V(kRemainder, "remainder", kBinary)                         \
  V(kMaximum, "maximum", kBinary)                             \
  V(kMinimum, "minimum", kBinary)                             \
  V(kPower, "power", kBinary)                                 \
  V(kAtan2, "atan2", kBinary)                                 \
  V(kAnd, "and", kBinary)                                     \
  V(kOr, "or", kBinary)                                       \
  V(kXor, "xor", kBinary)                                     \
  V(kShiftLeft, "shift-left", kBinary)                        \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kBinary) \
  V(kGcd, "gcd", kBinary) /* ours */                          \
  V(kCompare, "compare", kCompare)                            \
  V(kSelect, "select", kOther)                                \
  V(kClamp, "clamp", kOther)                                  \
  V(kConvert, "convert", kOther)                              \
  V(kBitcastConvert, "bitcast-convert", kOther)               \
  V(kBroadcast, "broadcast", kOther)                          \
  V(kReshape, "reshape", kOther)                              \
  V(kTranspose, "transpose", kOther)                          \
  V(kSlice, "slice", kOther)                                  \
  V(kPad, "pad", kOther)                                      \
  V(kConcatenate, "concatenate", kOther)                      \
  V(kReverse, "reverse", kOther)                              \
  V(kReduce, "reduce", kOther)                                \
  V(kReduceWindow, "reduce-window", kOther)                   \
  V(kDot, "dot", kOther)                                      \
  V(kConvolution, "convolution", kOther)                      \
  V(kGather, "gather", kOther)                                \
  V(kScatter, "scatter", kOther)                              \
  V(kRngUniform, "rng-uniform", kOther)                       \
  V(kAllReduce, "all-reduce", kOther)                         \
  V(kAllGather, "all-gather", kOther)                         \
  V(kReduceScatter, "reduce-scatter", kOther)                 \
  V(kTuple, "tuple", kOther)                                  \
  V(kGetTupleElement, "get-tuple-element", kOther)            \
  V(kFusion, "fusion", kOther)                                \
  V(kCall, "call", kOther)                                    \
  V(kCustomCall, "custom-call", kOther)

enum class Opcode {
#define TXLA_HLO_ENUM(e, name, kind) e,
  TXLA_HLO_OPCODES(TXLA_HLO_ENUM)
#undef TXLA_HLO_ENUM
};

enum class OpcodeKind { kUnary, kBinary, kCompare, kOther };

std::string_view OpcodeName(Opcode op);
OpcodeKind KindOf(Opcode op);
// Elementwise: unary, binary, compare, select, clamp, convert.
bool IsElementwise(Opcode op);
// Throws std::invalid_argument for an unknown name.
Opcode ParseOpcode(std::string_view name);

}  // namespace txla::hlo
