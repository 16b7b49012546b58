"""The HLO text parser and verifier, fuzzed with libFuzzer (AddressSanitizer and
UndefinedBehaviorSanitizer on) for a bounded time: bad input ends in an exception, never a crash,
a hang or undefined behaviour. TXLA_FUZZ_SECONDS runs it longer, TXLA_FUZZ_SEED=0 with a new random seed."""
import glob
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_hlo_parser_survives_fuzzing(tmp_path):
    seconds = os.environ.get('TXLA_FUZZ_SECONDS', '60')
    run = subprocess.run(['bash', os.path.join(ROOT, 'tests', 'fuzz', 'run_hlo_parser_fuzzer.sh'),
                          str(tmp_path), seconds], capture_output=True, text=True,
                         timeout=int(seconds) + 600)
    findings = [os.path.basename(p) for pattern in ('crash-*', 'leak-*', 'timeout-*', 'oom-*')
                for p in glob.glob(str(tmp_path / pattern))]
    assert run.returncode == 0 and not findings, (findings, run.stderr[-4000:])
    assert 'Done' in run.stderr, run.stderr[-2000:]  # it ran to its time limit
