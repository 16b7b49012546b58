"""torch functions whose result PyTorch/XLA puts on the xla device where torch's would not.

`torch.nn.utils.clip_grad_norm_` over parameters none of which has a gradient returns
`torch.tensor(0.0)`, a CPU tensor; PyTorch/XLA returns it on the parameters' xla device, so a
training step that logs or compares the norm keeps it with the step's other values. Wrapped at
import, for xla parameters only; everything else is torch's.
"""
import functools

import torch


def install():
    from torch.nn.utils import clip_grad
    original = clip_grad.clip_grad_norm_

    @functools.wraps(original)
    def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
        parameters = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
        total = original(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
        if (parameters and total.device.type == 'cpu' and all(p.grad is None for p in parameters)
                and all(p.device.type == 'xla' for p in parameters)):
            return total.to(parameters[0].device)
        return total

    clip_grad.clip_grad_norm_ = clip_grad_norm_
    torch.nn.utils.clip_grad_norm_ = clip_grad_norm_
