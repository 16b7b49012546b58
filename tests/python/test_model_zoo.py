"""The model zoo (model_zoo.py): models from transformers, timm, torchvision and diffusers, and
PyTorch's recurrent layers, trained (or, for the diffusion loop, evaluated) on the device against
eager float64 and float32.

Each model, at every step: the device's distance from float64 at most 10x eager float32's; no
graph on the interpreter; no new compilation after the first two steps (the second step's graphs
differ from the first's where the optimizer's state appears); no CPU fallback and no op without a
lowering. The trained models end with an evaluation held to the same rule.
"""
import pytest

import model_zoo

LIBRARIES = {'gpt2': 'transformers', 'bert': 'transformers', 't5': 'transformers', 'llama': 'transformers',
             'whisper': 'transformers', 'unet': 'diffusers', 'vit': 'timm', 'convnext': 'timm',
             'resnet18': 'torchvision', 'mobilenet': 'torchvision', 'lstm': None, 'gru': None}
WARM_UP_STEPS = 2


@pytest.mark.parametrize('name', sorted(model_zoo.ZOO))
def test_zoo_model_trains_like_eager(name, dev):
    if LIBRARIES[name]:
        pytest.importorskip(LIBRARIES[name])
    history, fallbacks, not_lowered = model_zoo.train_three_ways(model_zoo.ZOO[name]())
    table = '\n'.join(f"  step {i}: device {h['xla']:.2e} eager {h['f32']:.2e} losses {h['losses']}"
                      for i, h in enumerate(history))
    assert not model_zoo.within_ten_times_eager(history), f'{name} drifts from float64:\n{table}'
    assert all(h['interpreted'] == 0 for h in history), f'{name} ran graphs on the interpreter: {not_lowered}'
    assert not not_lowered
    assert fallbacks == [], f'{name} ran ops on the CPU: {fallbacks}'
    late_compiles = [h['compiles'] for h in history[WARM_UP_STEPS:]]
    assert not any(late_compiles), f'{name} compiled graphs after warm-up: {late_compiles}'


def test_the_ten_times_rule_sees_a_device_that_drifts():
    """The rule the zoo applies fails a device that is ten times further from float64 than eager,
    and forgives one that is exact where eager is too."""
    step = {'losses': {}, 'compiles': 0, 'interpreted': 0}
    assert model_zoo.within_ten_times_eager([dict(step, xla=2e-4, f32=1e-5)]) == [(0, 2e-4, 1e-5)]
    assert model_zoo.within_ten_times_eager([dict(step, xla=9e-5, f32=1e-5), dict(step, xla=0.0, f32=0.0)]) == []
