#!/usr/bin/env bash
# Builds the HLO parser fuzzer with clang (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer)
# and runs it for a bounded time from the seed corpus. Usage: run_hlo_parser_fuzzer.sh OUT_DIR SECONDS
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$1"
SECONDS_TO_RUN="${2:-60}"
mkdir -p "$OUT/corpus"
cp "$ROOT"/tests/fuzz/corpus/* "$OUT/corpus/"
SOURCES=("$ROOT"/csrc/hlo/*.cc "$ROOT"/csrc/runtime/element_type.cc "$ROOT"/tests/fuzz/hlo_parser_fuzzer.cc)
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I "$ROOT/csrc" "${SOURCES[@]}" -o "$OUT/hlo_parser_fuzzer"
cd "$OUT"
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb bounds memory per input. A fixed
# seed (TXLA_FUZZ_SEED, default 1) makes the test's run repeatable; TXLA_FUZZ_SEED=0 explores anew.
./hlo_parser_fuzzer -seed="${TXLA_FUZZ_SEED:-1}" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 corpus
