"""The environment switches: declared once (csrc/debug/config.h), read once at import, listed by
torch_xla._XLAC._xla_config(), documented in the README's table; those that change generated code
are part of the compile-cache key."""
import os
import re

import torch

import torch_xla
from conftest import CounterDelta

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_SIDE = {'XLA_METRICS_FILE', 'TXLA_COLLECTIVE_TIMEOUT_S'}  # read by the Python package


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
