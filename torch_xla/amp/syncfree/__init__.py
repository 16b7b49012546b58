"""Optimizers that skip a step on the device (PyTorch/XLA's torch_xla.amp.syncfree): `step(found_inf=t)`
leaves the parameters and the optimizer state as they were when `t` (a device scalar, from
GradScaler) is nonzero, without reading it on the host. Without `found_inf` they are torch's."""
import torch


def _skippable(base):

    class Optimizer(base):

        @torch.no_grad()
        def step(self, closure=None, found_inf=None):
            if found_inf is None:
                return super().step(closure)
            before = {}
            for group in self.param_groups:
                for p in group['params']:
                    if p.grad is None:
                        continue
                    before[p] = p.detach().clone()
                    for key, value in self.state.get(p, {}).items():
                        if isinstance(value, torch.Tensor):
                            before[(p, key)] = value.detach().clone()
            loss = super().step(closure)
            skip = found_inf > 0
            for group in self.param_groups:
                for p in group['params']:
                    if p not in before:
                        continue
                    p.copy_(torch.where(skip, before[p], p))
                    for key, value in self.state.get(p, {}).items():
                        old = before.get((p, key))
                        if old is not None:
                            value.copy_(torch.where(skip.to(value.device), old, value))
                        elif isinstance(value, torch.Tensor):  # state a skipped first step created
                            value.copy_(torch.where(skip.to(value.device), torch.zeros_like(value), value))
            return loss

    Optimizer.__name__ = Optimizer.__qualname__ = base.__name__
    return Optimizer


class SGD(_skippable(torch.optim.SGD)):
    """torch.optim.SGD that takes step(found_inf=...)."""


class Adam(_skippable(torch.optim.Adam)):
    """torch.optim.Adam that takes step(found_inf=...); its step count lives on the device."""

    def __init__(self, params, *args, **kwargs):
        kwargs.setdefault('capturable', True)  # the step count is a device tensor the skip restores
        super().__init__(params, *args, **kwargs)


class AdamW(_skippable(torch.optim.AdamW)):
    """torch.optim.AdamW that takes step(found_inf=...); its step count lives on the device."""

    def __init__(self, params, *args, **kwargs):
        kwargs.setdefault('capturable', True)
        super().__init__(params, *args, **kwargs)


__all__ = ['SGD', 'Adam', 'AdamW']
