"""The environment switches: declared once (csrc/debug/config.h), read once at import, listed by
torch_xla._XLAC._xla_config(), documented in the README's table; those that change generated code
are part of the compile-cache key. The Python package's own variables are declared once too
(torch_xla/_internal/config.py), and no other module reads the environment."""
import os
import re

import torch

import pytest

import torch_xla
from conftest import CounterDelta
from torch_xla._internal import config as py_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The Python package's variables in the table.
PYTHON_SIDE = {'XLA_METRICS_FILE', 'TXLA_COLLECTIVE_TIMEOUT_S', 'TXLA_FOREACH_DEFAULT'}


def readme_switches():
    with open(os.path.join(ROOT, 'README.md')) as f:
        text = f.read()
    table = text[text.index('## Switches'):]
    table = table[:table.index('\n\n', table.index('| variable |'))]
    return set(re.findall(r'`([A-Z][A-Z0-9_]+)=', table))


def test_every_switch_is_declared_once_and_documented():
    config = torch_xla._XLAC._xla_config()
    documented = readme_switches()
    assert set(config) | PYTHON_SIDE == documented, (set(config) ^ documented) - PYTHON_SIDE
    for name, (value, kind, codegen, doc) in config.items():
        assert kind in ('bool', 'int64_t', 'std::string') and doc, name


def test_switches_are_read_once_and_reloaded_on_request(monkeypatch, xla_env):
    before = torch_xla._XLAC._xla_config()['XLA_COMPILATION_CACHE_SIZE'][0]
    monkeypatch.setenv('XLA_COMPILATION_CACHE_SIZE', '7')
    assert torch_xla._XLAC._xla_config()['XLA_COMPILATION_CACHE_SIZE'][0] == before  # read once
    xla_env(XLA_SYNC_WAIT='1')
    config = torch_xla._XLAC._xla_config()
    assert config['XLA_SYNC_WAIT'][0] == '1' and config['XLA_COMPILATION_CACHE_SIZE'][0] == '7'


def test_a_codegen_switch_is_part_of_the_compile_cache_key(dev, xla_env):
    x = torch.randn(6, 5)

    def run():
        return (x.to(dev).exp() * 3).sum(0).cpu()

    expected = run()
    with CounterDelta('UncachedCompile', 'CachedCompile') as same:
        run()
    assert same['UncachedCompile'] == 0 and same['CachedCompile'] > 0
    xla_env(TXLA_PROFILE_KERNELS='1')  # changes the generated code: the graph compiles again
    with CounterDelta('UncachedCompile') as flipped:
        torch.testing.assert_close(run(), expected)
    assert flipped['UncachedCompile'] > 0
    xla_env(XLA_SAVE_TENSORS_FMT='dot')  # a switch that does not: the cached kernels serve
    with CounterDelta('UncachedCompile') as unchanged:
        run()
    assert unchanged['UncachedCompile'] == 0


def test_the_python_side_declares_every_variable_it_reads_and_the_readme_names_them():
    with open(os.path.join(ROOT, 'README.md')) as f:
        readme = f.read()
    declared = py_config.describe()
    assert PYTHON_SIDE <= set(declared)
    for name, (value, kind, fallback, doc) in declared.items():
        assert kind in ('bool', 'int', 'float', 'str') and doc, name
        if name not in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'CPU_NUM_DEVICES'):
            assert f'`{name}' in readme, name  # the launcher's own are torch's, not ours to document
    package = os.path.join(ROOT, 'torch_xla')
    readers = []
    for folder, _, files in os.walk(package):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith('.py') and not path.endswith(os.path.join('_internal', 'config.py')):
                with open(path) as f:
                    if re.search(r'os\.environ\.get|os\.getenv|environ\[', f.read()):
                        readers.append(os.path.relpath(path, ROOT))
    assert readers == []


def test_python_variables_parse_fall_back_and_name_themselves_when_wrong(monkeypatch):
    monkeypatch.delenv('XLA_NUM_HOSTS', raising=False)
    monkeypatch.setenv('NNODES', '3')
    assert py_config.XLA_NUM_HOSTS.get() == 3
    monkeypatch.setenv('XLA_NUM_HOSTS', '2')
    assert py_config.XLA_NUM_HOSTS.get() == 2
    monkeypatch.setenv('RANK', '5')  # the launcher's are read when asked, never cached
    assert torch_xla.runtime.global_ordinal() == 5
    monkeypatch.setenv('TXLA_COLLECTIVE_TIMEOUT_S', 'soon')
    with pytest.raises(ValueError, match='TXLA_COLLECTIVE_TIMEOUT_S=.soon. is not a float'):
        torch_xla.core.collectives.collective_timeout()
