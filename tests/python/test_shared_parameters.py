"""Parameters shared between modules stay one parameter when the model moves to xla.

A CPU parameter moved by `Module.to('xla')` used to become a new Parameter in every module that
held it, so a tied embedding and output head trained as two weights and the head's gradient
never reached the embedding (GPT-2's `wte`; torch_xla/_internal/shared_parameters.py says why).
"""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm


class TiedLM(nn.Module):
    """An embedding whose weight is also the output head's, as language models tie them."""

    def __init__(self, vocab=40, width=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.mix(self.embed(ids))))


def loss_of(model, ids):
    logits = model(ids)
    return F.cross_entropy(logits.flatten(0, 1), ids.flatten())


def test_moving_keeps_a_tied_weight_one_parameter(dev):
    model = TiedLM().to(dev)
    assert model.head.weight is model.embed.weight
    assert len(list(model.parameters())) == len(list(TiedLM().parameters()))


def test_tied_weight_gets_both_gradients(dev):
    torch.manual_seed(0)
    cpu = TiedLM()
    xla = copy.deepcopy(cpu).to(dev)
    ids = torch.randint(0, 40, (3, 7))
    loss_of(cpu, ids).backward()
    loss_of(xla, ids.to(dev)).backward()
    xm.mark_step()
    got = xla.embed.weight.grad.cpu()
    torch.testing.assert_close(got, cpu.embed.weight.grad, rtol=1e-5, atol=1e-6)
    # The head's share is most of it: the rows no id names get only the head's gradient.
    unused = torch.ones(40, dtype=torch.bool)
    unused[ids.unique()] = False
    assert got[unused].abs().max() > 1e-3


def test_tied_weight_trains_as_eager(dev):
    torch.manual_seed(1)
    cpu = TiedLM()
    xla = copy.deepcopy(cpu).to(dev)
    ids = torch.randint(0, 40, (4, 5))
    for model, d in ((cpu, 'cpu'), (xla, dev)):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        for _ in range(3):
            opt.zero_grad()
            loss_of(model, ids.to(d)).backward()
            opt.step()
            xm.mark_step()
    torch.testing.assert_close(xla.embed.weight.cpu(), cpu.embed.weight, rtol=1e-4, atol=1e-5)
    assert xla.head.weight is xla.embed.weight


def test_a_parameter_three_modules_hold_and_its_gradient(dev):
    a, b, c = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)
    b.weight = a.weight
    c.weight = a.weight
    a.weight.grad = torch.ones(4, 4)
    model = nn.Sequential(a, b, c).to(dev)
    assert model[0].weight is model[1].weight is model[2].weight
    assert model[0].bias is not model[1].bias
    assert model[2].weight.grad.device.type == 'xla'
    assert torch.equal(model[2].weight.grad.cpu(), torch.ones(4, 4))


def test_a_submodule_used_twice_and_a_dtype_change_on_the_device(dev):
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(3, 3))
    model[3].weight = shared.weight
    model = model.to(dev)
    assert model[0] is model[2] and model[3].weight is model[0].weight
    model = model.to(torch.float64)  # on the device: PyTorch's own `.data` path keeps it
    assert model[3].weight is model[0].weight and model[0].weight.dtype == torch.float64


def test_untied_modules_are_left_alone(dev):
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)).to(dev)
    assert model[0].weight is not model[1].weight
    # Moving back to the CPU unties nothing either.
    tied = TiedLM().to(dev).to('cpu')
    assert tied.head.weight is tied.embed.weight


@pytest.mark.parametrize('method', ['to_empty'])
def test_to_empty_keeps_it(method, dev):
    with torch.device('meta'):
        model = TiedLM()
    model = model.to_empty(device=dev)
    assert model.head.weight is model.embed.weight
