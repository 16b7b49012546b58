// Recurrent layers: txla::rnn_layer and txla::rnn_layer_backward, each one library call over the
// whole sequence (compiler/library/recurrent.h has the layouts; aten/recurrent_layers.cc records
// them for nn.LSTM and nn.GRU).
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// The call's target names the cell; dimensions={0}: the layer runs from the last step.
Instruction* RecurrentCall(LoweringContext& c, const ir::Node& n, size_t cell_arg, bool backward,
                           std::vector<Instruction*> operands) {
  using T = hlo::CustomCallTarget;
  hlo::Attributes a;
  const bool lstm = c.ConstArg(n, cell_arg).toInt() == 0;
  a.custom_call_target = lstm ? (backward ? T::kLstmLayerBackward : T::kLstmLayer)
                              : (backward ? T::kGruLayerBackward : T::kGruLayer);
  if (c.ConstArg(n, cell_arg + 1).toBool()) a.dimensions = {0};
  return c.Add(Opcode::kCustomCall, hlo::Shape::Array(OutType(n), n.shape(0).sizes), std::move(operands), a);
}

// rnn_layer(input_gates, w_hh, b_hh, h0, c0, cell, reverse)
Outs RnnLayer(LoweringContext& c, const ir::Node& n) {
  std::vector<Instruction*> operands;
  for (size_t k = 0; k < 5; ++k) operands.push_back(c.Operand(n, k));
  return {RecurrentCall(c, n, 5, false, std::move(operands))};
}

// rnn_layer_backward(grad_h, grad_hn, grad_cn, w_hh, h0, c0, forward, cell, reverse)
Outs RnnLayerBackward(LoweringContext& c, const ir::Node& n) {
  std::vector<Instruction*> operands;
  for (size_t k = 0; k < 7; ++k) operands.push_back(c.Operand(n, k));
  return {RecurrentCall(c, n, 7, true, std::move(operands))};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(txla_rnn_layer, RnnLayer)
TXLA_LOWER(txla_rnn_layer_backward, RnnLayerBackward)

}  // namespace txla::lower
