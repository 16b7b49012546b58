"""The debugging tool (PT_XLA_DEBUG=1 / PT_XLA_DEBUG_LEVEL): every compilation explained with its
cause and the user's frame, a recompilation with what differs from the nearest cached graph, reads
that run a graph mid-step and CPU fallbacks reported once per source line; quiet when nothing
recompiles. Each case runs a small script in a fresh process (the switches are read at import)."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import sys
import torch, torch_xla
import torch_xla.core.xla_model as xm
dev = torch_xla.device()
def mark(text):
    sys.stderr.write('@@' + text + '\\n'); sys.stderr.flush()
"""


def run(tmp_path, body, **env):
    script = tmp_path / 'script.py'
    source = PRELUDE + textwrap.dedent(body)
    script.write_text(source)
    environment = dict(os.environ, **env)
    for name in ('PT_XLA_DEBUG', 'PT_XLA_DEBUG_LEVEL', 'PT_XLA_DEBUG_FILE', 'XLA_IR_DEBUG'):
        if name not in env:
            environment.pop(name, None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = source.splitlines()
    line_of = lambda marker: next(k + 1 for k, l in enumerate(lines) if marker in l)  # noqa: E731
    return done.stderr, line_of


def after(text, marker):
    return text.split('@@' + marker + '\n', 1)[1]


def test_steady_training_is_quiet_after_its_first_compilations(tmp_path):
    err, line_of = run(tmp_path, """
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(6):
            if step == 3:
                mark('steady')
            x = torch.randn(8, 6).to(dev)
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            torch_xla.sync()  # THE SYNC
            loss.item()  # after the barrier: no graph runs
        """, PT_XLA_DEBUG='1', PT_XLA_DEBUG_LEVEL='1')  # PT_XLA_DEBUG alone adds execution analyses
    assert err.count('Compilation Cause') >= 1
    first = err.split('Compilation Analysis: Compilation Cause\n', 1)[1]
    assert first.startswith('Compilation Analysis:   user torch_xla.sync\n'), first
    assert f'<module> ({tmp_path / "script.py"}:{line_of("THE SYNC")})' in first
    assert 'the first graph compiled in this process' in first
    assert 'Post Compilation Analysis: Graph input size:' in err
    # Nothing compiles, nothing is read mid-step: nothing is said.
    assert after(err, 'steady').strip() == ''
    assert 'Execution Analysis' not in err  # level 1


def test_recompilation_names_the_input_shape_that_changed(tmp_path):
    err, line_of = run(tmp_path, """
        w = torch.randn(5, 3).to(dev)
        torch_xla.sync()
        for n in (4, 4, 3):
            if n == 3:
                mark('changed')
            x = torch.randn(n, 5).to(dev)
            y = (x @ w).relu().sum()
            torch_xla.sync()
        """, PT_XLA_DEBUG='1')
    changed = after(err, 'changed')
    assert changed.count('Compilation Cause') == 1
    assert 'input shapes or dtypes differ:' in changed
    assert 'f32[3,5] here, f32[4,5] there' in changed
    assert 'aten::mm(f32[3,5], f32[5,3]) -> f32[3,3]' in changed  # the ops it changed
    assert f'script.py:{line_of("(x @ w)")}' in changed  # the line that created them


def test_recompilation_names_a_constant_and_an_op_that_changed(tmp_path):
    err, line_of = run(tmp_path, """
        x = torch.randn(4, 5).to(dev)
        torch_xla.sync()
        for s in (0.5, 0.25, 1.0):
            if s == 1.0:
                mark('one')
            y = x * s
            torch_xla.sync()
        mark('branch')
        y = (x * 0.5).exp()  # A NEW OP
        torch_xla.sync()
        """, PT_XLA_DEBUG='1')
    one = after(err, 'one').split('@@branch')[0]
    assert one.count('Compilation Cause') == 1  # 0.5 -> 0.25 was an input, not a recompilation
    assert 'baked-in constants differ' in one and 'XLA_NO_SPECIAL_SCALARS=1' in one
    assert '1 f64[] here, (none) there' in one
    branch = after(err, 'branch')
    assert 'ops only in this graph (1' in branch
    assert re.search(r'aten::exp\(f32\[4,5\]\) -> f32\[4,5\]; created at <module> \(.*script.py:%d\)'
                     % line_of('A NEW OP'), branch), branch


def test_mid_step_reads_and_cpu_fallbacks_are_reported_once_with_their_lines(tmp_path):
    err, line_of = run(tmp_path, """
        x = torch.randn(4, 5).to(dev)
        torch_xla.sync()
        for step in range(3):
            y = (x * 2).sum()
            v = y.item()  # READ ITEM
            print(x + 1, file=sys.stderr)  # READ PRINT
            nz = torch.nonzero(x > 0)  # FALLBACK
            torch_xla.sync()
        """, PT_XLA_DEBUG='1')
    item = re.findall(r'pt-xla-profiler: user code trying to access tensor value with \.item\(\) at <module> '
                      r'\(.*script.py:(\d+)\)'
                      r' ran a graph in the middle of step', err)
    assert item == [str(line_of('READ ITEM'))]  # once, though it happened every step
    printed = re.findall(r'pt-xla-profiler: user code trying to access tensor value: printing a tensor '
                         r'\(print, str, repr\) at <module> '
                         r'\(.*script.py:(\d+)\)', err)
    assert printed == [str(line_of('READ PRINT'))]
    assert err.count('pt-xla-profiler: Op(s) not lowered: ') == 1
    assert 'aten::nonzero' in err.split('Op(s) not lowered: ')[1].splitlines()[0]
    assert 'Compilation Cause\nCompilation Analysis:   user code trying to access tensor value with .item()' in err


def test_level_two_analyses_every_execution_into_the_debug_file(tmp_path):
    log = tmp_path / 'debug.txt'
    err, _ = run(tmp_path, """
        x = torch.randn(4, 5).to(dev)
        for _ in range(3):
            x = x * 3 + 1
            torch_xla.sync()
        """, PT_XLA_DEBUG_LEVEL='2', PT_XLA_DEBUG_FILE=str(log))
    assert 'Analysis' not in err  # all of it went to the file
    text = log.read_text()
    assert text.count('Execution Analysis: Execution Cause\nExecution Analysis:   user torch_xla.sync') == 3
    assert text.count('Compilation Cause') == 1


def test_a_graph_with_an_unrequested_gradient_is_explained(tmp_path):
    # A bias-free convolution's backward, its input not requiring a gradient, leaves two of its
    # three outputs undefined: the analysis names them
    # instead of failing the barrier (it did, with "unsupported dtype").
    err, _ = run(tmp_path, """
        conv = torch.nn.Conv2d(3, 4, 3, bias=False).to(dev)
        for width in (8, 9):
            conv(torch.randn(2, 3, width, width).to(dev)).sum().backward()
            torch_xla.sync()
        """, PT_XLA_DEBUG='1')
    assert err.count('Compilation Cause') >= 2
    assert re.search(r'aten::convolution_backward\(.*\) -> undefined, f32\[4,3,3,3\], undefined ', err), err


def test_off_by_default(tmp_path):
    err, _ = run(tmp_path, """
        x = torch.randn(4, 5).to(dev)
        y = (x * 2).sum().item()
        torch_xla.sync()
        """)
    assert 'Analysis' not in err and 'pt-xla-profiler' not in err


@pytest.mark.parametrize('fmt', ['text', 'dot', 'hlo'])
def test_save_tensors_file_names_the_cause_and_the_tensors_in_each_format(tmp_path, fmt):
    log = tmp_path / 'graphs.txt'
    _, line_of = run(tmp_path, """
        x = torch.randn(3).to(dev)
        y = (x + 2).exp()
        torch_xla.sync()  # THE SYNC
        z = (y * 3).sum().item()  # THE READ
        """, XLA_SAVE_TENSORS_FILE=str(log), XLA_SAVE_TENSORS_FMT=fmt)
    entries = log.read_text().split('[ScheduleSyncTensorsGraph]\n')[1:]
    assert len(entries) == 2
    first, second = entries
    assert first.startswith('TensorsGraphInfo:\n')
    assert f'<module> ({tmp_path / "script.py"}:{line_of("THE SYNC")})' in first
    assert f'<module> ({tmp_path / "script.py"}:{line_of("THE READ")})' in second
    assert 'Tensors: f32[3]' in first and 'Tensors: f32[]' in second
    assert 'Root Hashes: (' in first and 'Graph Hash: ' in first
    graph = first.split('## BEGIN_GRAPH\n')[1].split('## END_GRAPH')[0]
    if fmt == 'text':
        assert 'aten::exp' in graph and 'aten::add.Tensor' in graph
    elif fmt == 'dot':
        assert graph.startswith('digraph G {') and 'aten::exp' in graph
        (tmp_path / 'graph.dot').write_text(graph)  # Graphviz renders it (setup.sh installs it)
        subprocess.run(['dot', '-Tpng', str(tmp_path / 'graph.dot'), '-o', str(tmp_path / 'graph.png')], check=True)
        assert (tmp_path / 'graph.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    else:
        assert graph.startswith('HloModule') and 'exponential(' in graph


def test_hlo_debug_carries_the_user_line_into_hlo_metadata_and_kernel_comments(tmp_path):
    err, line_of = run(tmp_path, """
        x = torch.randn(4, 8).to(dev)
        y = (x * 3).exp()  # LINE EXP
        z = y.sum(1)  # LINE SUM
        sys.stderr.write(torch_xla._XLAC._get_xla_tensors_hlo([z]))
        torch_xla.sync()
        """, XLA_IR_DEBUG='1', XLA_HLO_DEBUG='1', TMPDIR=str(tmp_path))
    script = tmp_path / 'script.py'
    exp, total = line_of('LINE EXP'), line_of('LINE SUM')
    assert re.search(r'exponential\(.*metadata=\{op_type="aten::exp" source_file="%s" source_line=%d\}'
                     % (re.escape(str(script)), exp), err), err
    assert f'op_type="aten::sum.dim_IntList" source_file="{script}" source_line={total}' in err
    sources = '\n'.join(p.read_text() for p in tmp_path.glob('torch_xla_cpp_*/graph_*.cc'))
    assert f'// computes aten::exp at {script}:{exp}\n' in sources
    assert f'// computes aten::sum.dim_IntList at {script}:{total}\n' in sources


def test_without_hlo_debug_there_is_no_metadata(tmp_path):
    err, _ = run(tmp_path, """
        x = torch.randn(4, 8).to(dev)
        sys.stderr.write(torch_xla._XLAC._get_xla_tensors_hlo([(x * 3).exp()]))
        """, XLA_IR_DEBUG='1')
    assert 'exponential(' in err and 'metadata=' not in err


def test_pt_xla_debug_alone_analyses_executions_and_names_compiled_functions(tmp_path):
    err, _ = run(tmp_path, """
        x = torch.randn(4, 5).to(dev)
        torch_xla.sync()
        def toy(t):
            return (t * 3).exp()
        torch_xla.compile(toy)(x)
        """, PT_XLA_DEBUG='1')
    assert 'Execution Analysis: Execution Cause' in err  # as PyTorch/XLA's level 100
    for line in ('Aliased Input size: ', 'Intermediate tensor size: ', 'Compiled program size: '):
        assert re.search(r'Post Compilation Analysis: ' + line + r'[0-9.]+ GB\n', err), line
    assert 'Compilation Analysis:   torch_xla.compile\nCompilation Analysis: Graph Info:\n' \
           'Compilation Analysis:   Graph Name: toy\n' in err


def test_frames_start_at_the_api_called_and_mark_what_is_left_out(tmp_path):
    err, line_of = run(tmp_path, """
        def deep(n):
            if n == 0:
                x = torch.randn(3, device=dev) * 2
                torch_xla.sync()  # SYNC HERE
                return
            deep(n - 1)
        deep(6)
    """, PT_XLA_DEBUG_LEVEL='1', PT_XLA_DEBUG_MAX_FRAME='4')
    block = err.split('Python Frame Triggered Execution:\n', 1)[1].split('---', 1)[0]
    frames = [line.split('Analysis:', 1)[1].strip() for line in block.splitlines()]
    frames = [f for f in frames if f]
    # torch_xla.sync itself (not the helper it calls), then the user's frames outwards, four in all
    assert frames[0].startswith('sync (') and 'torch_xla/__init__.py' in frames[0], frames
    assert frames[1] == f'deep ({tmp_path / "script.py"}:{line_of("SYNC HERE")})', frames
    assert len(frames) == 5 and frames[4] == '..........', frames


def test_a_compiled_call_reports_its_input_sync_its_compilation_and_each_run(tmp_path):
    err, _ = run(tmp_path, """
        x = torch.randn(4, 4, device=dev) + 1  # pending: computed before the graph runs
        compiled = torch.compile(lambda t: torch.tanh(t) * 3, backend='openxla_eval')
        compiled(x)
        mark('replay')
        compiled(torch.randn(4, 4).to(dev))
        """, PT_XLA_DEBUG='1', PT_XLA_DEBUG_LEVEL='2')
    causes = lambda text, what: re.findall(what + r' Analysis: ' + what + r' Cause\n.*?:   (.*)\n', text)  # noqa: E731
    first, replay = err.split('@@replay\n')
    assert causes(first, 'Compilation') == ['torch_xla.sync when dynamo processing input graphs',
                                            'dynamo is compiling a FX graph to HLO']
    assert causes(first, 'Execution') == ['torch_xla.sync when dynamo processing input graphs',
                                          'dynamo is executing a compiled program']
    # The replay compiles nothing; its run is reported with the graph's hash, inputs and outputs.
    assert causes(replay, 'Compilation') == []
    assert causes(replay, 'Execution') == ['dynamo is executing a compiled program']
    graph = re.findall(r'Execution Analysis:   Graph Hash: (\w+)\nExecution Analysis:   Number of Graph Inputs: (\d+)\n'
                       r'Execution Analysis:   Number of Graph Outputs: (\d+)', err)
    assert graph[-1] == graph[-2] and graph[-1][2] == '1', graph
