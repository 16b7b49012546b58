"""Real architectures trained for several steps on the device against eager CPU PyTorch.

Training a deep network with ReLUs after batch norm is chaotic at the scale of rounding: an
activation within a few ulps of zero flips its mask when a sum is rounded differently, and the
flip changes a whole channel's gradient. Eager float32 itself drifts from float64 by percents
within a few steps. So each model is trained three ways from the same start: eager float64 (the
reference), eager float32 and the device in float32, and the device must stay as close to float64
as eager float32 does (within a small factor). A device that computes sums less accurately than
eager, or computes anything wrong, drifts much further (ResNet-18 before double accumulators:
0.14 relative parameter deviation after one step, against eager's 5e-6).
"""
import copy

import pytest
import torch
import torch.nn as nn

import torch_xla.core.xla_model as xm
from conftest import CounterDelta, deviation_from_largest

torchvision = pytest.importorskip('torchvision')


def state(model):
    """Parameters and floating-point buffers (BatchNorm's running statistics)."""
    values = dict(model.named_parameters())
    values.update((n, b) for n, b in model.named_buffers() if b.dtype.is_floating_point)
    return values


def parameter_deviation(model, reference):
    """Largest relative deviation of any parameter or running statistic from the reference's."""
    ref = state(reference)
    worst = 0.0
    for name, p in state(model).items():
        worst = max(worst, deviation_from_largest(p.detach().cpu(), ref[name].detach()))
    return worst


def train_step(model, optimizer, inputs, target, loss_fn):
    """One training step, ended by a barrier; its loss."""
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), target)
    loss.backward()
    optimizer.step()
    xm.mark_step()
    return loss.item()


def train_three_ways(model, inputs, target, steps, make_optimizer, loss_fn):
    """Trains float64 and float32 copies eagerly and a float32 copy on the device; per step, the
    losses and the parameter deviations from float64 of eager float32 and of the device."""
    dev = xm.xla_device()
    models = {'f64': copy.deepcopy(model).double(), 'f32': copy.deepcopy(model),
              'xla': copy.deepcopy(model).to(dev)}
    data = {'f64': (inputs.double(), target), 'f32': (inputs, target),
            'xla': (inputs.to(dev), target.to(dev))}
    optimizers = {k: make_optimizer(m.parameters()) for k, m in models.items()}
    history = []
    for _ in range(steps):
        losses = {k: train_step(m, optimizers[k], *data[k], loss_fn) for k, m in models.items()}
        history.append((losses, parameter_deviation(models['f32'], models['f64']),
                        parameter_deviation(models['xla'], models['f64'])))
    return history, models


def assert_as_close_as_eager(history, factor=3.0, floor=1e-5, strict_steps=None, chaotic_bound=None):
    """Per step: the device's parameter deviation from float64 within `factor` times eager float32's
    and its loss as close. From step `strict_steps` on, parameters and loss are held to the relative
    `chaotic_bound` instead: where a perturbation of the parameters' last bits flips a ReLU or
    max-pool decision, which of two float32 runs lands near float64 is chance."""
    for step, (losses, eager_dev, xla_dev) in enumerate(history):
        chaotic = strict_steps is not None and step >= strict_steps
        bound = factor * eager_dev + floor
        loss_bound = factor * abs(losses['f32'] - losses['f64']) + 1e-5 * abs(losses['f64']) + 1e-6
        if chaotic:
            bound = max(bound, chaotic_bound)
            loss_bound = max(loss_bound, chaotic_bound * abs(losses['f64']))
        assert xla_dev <= bound, (
            f'step {step}: the device deviates {xla_dev:.2e} from float64, eager float32 only '
            f'{eager_dev:.2e} (losses {losses})')
        assert abs(losses['xla'] - losses['f64']) <= loss_bound, f'step {step}: losses {losses}'


def test_resnet18_trains_like_eager():
    """torchvision ResNet-18 in train mode, SGD with momentum, 4 steps on one batch."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).train()
    x = torch.randn(8, 3, 64, 64)
    y = torch.randint(0, 10, (8,))
    history, _ = train_three_ways(
        model, x, y, steps=4, make_optimizer=lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
        loss_fn=nn.CrossEntropyLoss())
    # Measured: after the first step, float64 parameters perturbed by 1e-6 (relative; both float32
    # runs are ~3e-6 away) deviate 6.8e-3 after the second in two seeds of three, 1e-7 only 4e-7:
    # a decision flips. The first step is held to eager's precision, the later ones to 2e-2.
    assert_as_close_as_eager(history, strict_steps=1, chaotic_bound=2e-2)


class Block(nn.Module):
    """A residual block with BatchNorm, optionally downsampling (a 1x1 strided projection)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (x if self.down is None else self.down(x)))


def deep_residual_net():
    """Eight residual blocks: deep enough that buffer reuse recycles many temporaries."""
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    widths = [(16, 16, 1), (16, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1),
              (64, 64, 1), (64, 128, 2)]
    layers += [Block(cin, cout, s) for cin, cout, s in widths]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.0), nn.Linear(128, 10)]
    return nn.Sequential(*layers)


def on_cpu(value, dtype=None):
    """An optimizer state_dict's tensors copied to the CPU (floating ones as `dtype`): copied, never
    shared, or the eager optimizer would advance the device optimizer's CPU `step` counter too."""
    if isinstance(value, dict):
        return {k: on_cpu(v, dtype) for k, v in value.items()}
    if isinstance(value, list):
        return [on_cpu(v, dtype) for v in value]
    if isinstance(value, torch.Tensor):
        value = value.detach().to('cpu', copy=True)
        return value.to(dtype) if dtype is not None and value.is_floating_point() else value
    return value


def relative_errors(tensors, references):
    """Per tensor (matched by key), the norm of its deviation from its reference relative to the
    reference's norm."""
    errors = {}
    for key, r in references.items():
        r = r.detach().double()
        errors[key] = ((tensors[key].detach().cpu().double() - r).norm() / r.norm().clamp_min(1e-30)).item()
    return errors


def step_results(model, optimizer):
    """What one training step computes, by name: gradients, Adam's moments, running statistics."""
    out = {n + '.grad': p.grad for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        for key, value in optimizer.state[p].items():
            if key != 'step':
                out[n + '.' + key] = value
    out.update((n, b) for n, b in model.named_buffers() if b.dtype.is_floating_point)
    return out


def train_checking_each_step(model, inputs, target, steps, make_optimizer, loss_fn):
    """Trains a float32 copy on the device; before each step, eager float64 and float32 copies of
    the device's parameters and optimizer state take the same step. Per step: the losses, and the
    deviations from that float64 step of eager float32's and of the device's step results
    (step_results) and parameters. Each step is checked from where the device is, so a chaotic
    trajectory (one that two float32 runs leave in different directions) neither hides nor fakes
    an error."""
    dev = xm.xla_device()
    device_model = copy.deepcopy(model).to(dev)
    optimizer = make_optimizer(device_model.parameters())
    x, y = inputs.to(dev), target.to(dev)
    history = []
    for _ in range(steps):
        runs = {}
        for name, dtype in (('f64', torch.float64), ('f32', torch.float32)):
            m = copy.deepcopy(device_model).cpu().to(dtype)
            opt = make_optimizer(m.parameters())
            if optimizer.state:
                opt.load_state_dict(on_cpu(optimizer.state_dict(), dtype))
            runs[name] = (m, opt, inputs.to(dtype), target)
        runs['xla'] = (device_model, optimizer, x, y)
        losses = {name: train_step(m, opt, xs, ys, loss_fn) for name, (m, opt, xs, ys) in runs.items()}
        results = {k: step_results(m, opt) for k, (m, opt, _, _) in runs.items()}
        params = {k: dict(m.named_parameters()) for k, (m, _, _, _) in runs.items()}
        history.append({'losses': losses,
                        'f32': relative_errors(results['f32'], results['f64']),
                        'xla': relative_errors(results['xla'], results['f64']),
                        'params f32': relative_errors(params['f32'], params['f64']),
                        'params xla': relative_errors(params['xla'], params['f64'])})
    return history


def adam(params):
    return torch.optim.Adam(params, lr=1e-3, eps=1e-6)


def test_deep_residual_net_with_adam_in_float64_follows_eager_float64():
    """In float64 a ReLU's input is never within rounding of zero here, so the device's trajectory
    must stay on eager's to float64 rounding: any systematic error in any op shows."""
    torch.manual_seed(1)
    model = deep_residual_net().train().double()
    x, y = torch.randn(6, 3, 32, 32, dtype=torch.float64), torch.randint(0, 10, (6,))
    dev = xm.xla_device()
    device_model = copy.deepcopy(model).to(dev)
    runs = [(model, adam(model.parameters()), x, y),
            (device_model, adam(device_model.parameters()), x.to(dev), y.to(dev))]
    for step in range(5):
        losses = [train_step(m, opt, xs, ys, nn.CrossEntropyLoss()) for m, opt, xs, ys in runs]
        assert losses[1] == pytest.approx(losses[0], rel=1e-10), f'step {step}'
        deviation = parameter_deviation(device_model, model)
        assert deviation <= 1e-9, f'step {step}: parameters {deviation:.2e} from eager float64'


def test_deep_residual_net_with_adam_trains_like_eager():
    # Float32. Adam's first steps move each parameter by about lr times the sign of its gradient,
    # so a rounding-level gradient of a near-zero element becomes a full step, and ReLU/BatchNorm
    # near-ties turn that into percent-level gradient changes a step later: the 5-step float32
    # trajectories leave float64 chaotically (eager float32 itself by 3e-2 at step 2 in one seed
    # of two on an AVX2 EPYC, the device in the other). So each step is checked from the device's
    # own state. Even then a ReLU whose input is within rounding of zero (TXLA_CHECK_GRAPHS names
    # them) moves the gradients of every layer below it, in eager float32 as on the device: the
    # median tensor, at rounding (1e-7 to 3e-6) in most steps, reached 1.8e-3 for both in one;
    # and for the device alone in another (with MKL's float32 GEMM the state of step 3 held a
    # ReLU input that the device's convolutions, Debian's oneDNN 2.6, round to the other side of
    # zero from eager's oneDNN 3.x). So the device's median tensor is held to eager float32's in
    # every step but one, and below 1e-2 in that one: a float32-specific systematic error (issue
    # 9's 2-10% gradients from float32 accumulators) shows in every step, far beyond either.
    torch.manual_seed(1)
    model = deep_residual_net().train()
    x = torch.randn(6, 3, 32, 32)
    y = torch.randint(0, 10, (6,))
    history = train_checking_each_step(model, x, y, steps=5, make_optimizer=adam,
                                       loss_fn=nn.CrossEntropyLoss())
    median = lambda errors: sorted(errors.values())[len(errors) // 2]  # noqa: E731
    beyond_eager = []
    for step, h in enumerate(history):
        for what in ('xla', 'params xla'):
            errors, eager = h[what], h[what.replace('xla', 'f32')]
            worst = max(errors, key=errors.get)
            report = (f'step {step}, {what}: median tensor error {median(errors):.2e} (eager float32 '
                      f'{median(eager):.2e}), worst {worst} {errors[worst]:.2e}')
            assert median(errors) <= 1e-2, report
            if median(errors) > 3 * median(eager) + 1e-5:
                beyond_eager.append(report)
        losses = h['losses']
        loss_bound = 3 * abs(losses['f32'] - losses['f64']) + 1e-5 * abs(losses['f64']) + 1e-6
        assert abs(losses['xla'] - losses['f64']) <= loss_bound, f'step {step}: {losses}'
    assert len({r.split(',')[0] for r in beyond_eager}) <= 1, beyond_eager


def test_f32_sums_accumulate_like_eager(dev):
    """A long float32 sum whose naive running total loses digits: 2^24 + many ones."""
    x = torch.ones(1 << 16)
    x[0] = 2.0 ** 24
    for shape, dim in [((1 << 16,), 0), ((1 << 14, 4), 0), ((4, 1 << 14), 1)]:
        t = x.reshape(shape)
        got = t.to(dev).sum(dim).cpu()
        want = t.double().sum(dim)
        assert (got.double() - want).abs().max().item() <= 2.0, (shape, dim, got, want)
    c = torch.full((1 << 16,), 0.1)
    torch.testing.assert_close(c.to(dev).cumsum(0).cpu().double(), c.double().cumsum(0), rtol=1e-6, atol=0)


def test_checked_mode_runs_every_graph_beside_the_interpreter(dev, xla_env):
    xla_env(TXLA_CHECK_GRAPHS='1')
    torch.manual_seed(2)
    model = nn.Sequential(Block(3, 8, 2), nn.Flatten(), nn.Linear(8 * 4 * 4, 3)).to(dev)
    x = torch.randn(4, 3, 8, 8).to(dev)
    with CounterDelta('CheckedGraphs', 'CheckedGraphMismatch') as d:
        model(x).sum().backward()
        xm.mark_step()
    assert d['CheckedGraphs'] >= 1
    assert d['CheckedGraphMismatch'] == 0


def test_checked_mode_names_a_miscompiled_op(dev, xla_env, capfd):
    """A deliberately miscompiled op (TXLA_TEST_MISCOMPILE) is found and named, and the tensors
    get the interpreter's right values."""
    xla_env(TXLA_CHECK_GRAPHS='1', TXLA_TEST_MISCOMPILE='aten::sigmoid')
    a = torch.randn(5, 7)
    b = torch.randn(5, 7)
    with CounterDelta('CheckedGraphMismatch') as d:
        y = (torch.sigmoid(a.to(dev) * 2) * b.to(dev)).sum(1)
        xm.mark_step()
        got = y.cpu()
    assert d['CheckedGraphMismatch'] == 1
    err = capfd.readouterr().err
    assert 'differs from the interpreter' in err
    assert 'the first node whose compiled value differs from ATen' in err and 'aten::sigmoid' in err
    assert 'graph_' in err  # the dump paths
    torch.testing.assert_close(got, (torch.sigmoid(a * 2) * b).sum(1))


def test_unfused_kernels_compute_their_own_values(dev, xla_env):
    """With fusion off every instruction is its own kernel; each must compute its value, not read
    back the buffer it is about to write (a batch norm's forward read garbage)."""
    xla_env(TXLA_DISABLE_PASSES='fusion')
    torch.manual_seed(3)
    bn = nn.BatchNorm2d(4)
    conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
    x = torch.randn(2, 3, 8, 8)
    want = torch.relu(bn(conv(x)))
    got = torch.relu(copy.deepcopy(bn).to(dev)(copy.deepcopy(conv).to(dev)(x.to(dev)))).cpu()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_clip_grad_norm_stays_compiled(dev):
    """clip_grad_norm_'s norm order is a constant of the graph, so the step is lowered, not sent
    to the interpreter (it was a graph parameter: NoLowering)."""
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    model_x = copy.deepcopy(model).to(dev)
    x = torch.randn(3, 6)
    for m, inp in [(model, x), (model_x, x.to(dev))]:
        m(inp).pow(2).sum().backward()
    for norm_type in [2.0, 3.0, float('inf')]:
        want = nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type=norm_type)
        with CounterDelta('InterpretedGraph') as d:
            got = nn.utils.clip_grad_norm_(model_x.parameters(), 0.1, norm_type=norm_type)
            xm.mark_step()
        assert d['InterpretedGraph'] == 0
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
    for p, px in zip(model.parameters(), model_x.parameters()):
        torch.testing.assert_close(px.grad.cpu(), p.grad, rtol=1e-5, atol=1e-6)
