import os
import subprocess
import sys

# The tests exercise the package as installed in .venv; from a checkout that has not
# been installed yet, the source tree (with the built extension inside) stands in for it.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
sys.path.insert(0, os.path.join(_ROOT, 'examples'))  # the example models are shared with tests

import pytest  # noqa: E402
import torch  # noqa: E402

import torch_xla  # noqa: E402,F401
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402


def cpu_flags():
    """The instruction-set flags /proc/cpuinfo lists for this CPU (empty where it cannot be read)."""
    try:
        with open('/proc/cpuinfo') as f:
            return set(next((line.split(':', 1)[1].split() for line in f if line.startswith('flags')), []))
    except OSError:
        return set()


def deviation_from_largest(got, want):
    """The largest difference of `got` from `want`, as a fraction of `want`'s largest magnitude:
    the error of algorithms that reassociate sums (Winograd, blocked reductions) is a fraction of
    the largest value, not of each one."""
    return ((got.double() - want.double()).abs().max() / want.double().abs().max().clamp_min(1e-30)).item()


@pytest.fixture
def dev():
    xm.mark_step()  # nothing pending from an earlier test leaks into this one
    yield xm.xla_device()
    # A test that gave the device an RNG state of its own (xm.set_rng_state) hands it back to
    # torch's default generator, which the next test may seed.
    torch_xla._XLAC._xla_forget_rng_seed()


def counter(name):
    """A counter's value, or a metric's number of samples ('ExecuteTime': graphs run); 0 when
    it was never touched."""
    value = met.counter_value(name)
    if value is None and name in met.metric_names():
        return met.metric_data(name)[0]
    return value or 0


class MatMulLinear(torch.nn.Linear):
    """A linear layer written as `x @ w.t() + b`: the transposed weight whose views the device
    handles (deferred views, AOTAutograd's saved transposes). F.linear itself is one op each way."""

    def forward(self, x):
        return x @ self.weight.t() + self.bias


class CounterDelta:
    """How much named counters grew inside a `with` block; without names, every counter that
    changed (`delta` then holds only those)."""

    def __init__(self, *names):
        self.names = names

    def _values(self):
        import torch_xla.debug.metrics as met
        return {n: counter(n) for n in self.names} if self.names else {
            n: met.counter_value(n) for n in met.counter_names()}

    def __enter__(self):
        self.start = self._values()
        return self

    def __exit__(self, *exc):
        end = self._values()
        self.delta = {n: v - self.start.get(n, 0) for n, v in end.items()
                      if self.names or v != self.start.get(n, 0)}
        return False

    def __getitem__(self, name):
        return self.delta.get(name, 0)


def raises_as_eager(f, dev):
    """f('cpu') and f(dev) both raise RuntimeError naming the same rule (the first words of eager's
    message: "output with shape", "result type", "unsupported operation"), and the device still
    works after."""
    with pytest.raises(RuntimeError) as eager:
        f('cpu')
    with pytest.raises(RuntimeError) as lazy:
        f(dev)
    assert str(lazy.value).split()[:2] == str(eager.value).split()[:2], (lazy.value, eager.value)
    assert float(torch.ones(1, device=dev).sum()) == 1.0


@pytest.fixture
def xla_env(monkeypatch):
    """Sets environment switches for one test: `xla_env(NAME='value', ...)`. The device reads its
    switches once (at import), so the configuration is re-read after setting and after undoing."""

    def set_switches(**switches):
        for name, value in switches.items():
            monkeypatch.setenv(name, value)
        torch_xla._XLAC._xla_reload_config()

    yield set_switches
    monkeypatch.undo()
    torch_xla._XLAC._xla_reload_config()


def run_python(script, **env):
    """Runs `script` in a fresh interpreter with extra environment variables; its stdout."""
    full_env = dict(os.environ, PYTHONPATH=_ROOT, **env)
    return subprocess.run([sys.executable, '-c', script], env=full_env, capture_output=True,
                          text=True, check=True).stdout
