// HLO in XLA's text syntax:
//
//   HloModule m
//
//   %add (x: f32[], y: f32[]) -> f32[] {
//     %x = f32[] parameter(0)
//     %y = f32[] parameter(1)
//     ROOT %add.1 = f32[] add(f32[] %x, f32[] %y)
//   }
//
//   ENTRY %main (p0: f32[2,3]) -> f32[2] {
//     ...
//   }
//
// Called computations come before their callers; the entry comes last.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace txla::hlo {

std::string ToText(const Module& module);
std::string ToText(const Computation& computation, bool is_entry = false);
std::string ToText(const Instruction& instruction);
// The attribute part alone ("dimensions={1}, to_apply=%add"), for compact dumps.
std::string AttributesToText(const Instruction& instruction);
std::string WindowToText(const std::vector<WindowDim>& window);
std::string DimLabels(const ConvDims& conv, int64_t rank);

}  // namespace txla::hlo
