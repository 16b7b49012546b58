"""`torch_xla.amp.GradScaler`: torch's GradScaler on the xla device, without a host round trip per
step when the optimizer can skip a step itself (the `syncfree` optimizers take `found_inf`)."""
import inspect

import torch


class GradScaler(torch.amp.GradScaler):
    """torch.amp.GradScaler for 'xla'. With an optimizer whose step takes `found_inf` (those of
    torch_xla.amp.syncfree), the step is always taken and skips itself on the device when a
    gradient was inf or nan; with any other optimizer, whether to step is read on the host."""

    def __init__(self, device='xla', init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        found = tuple(optimizer_state['found_inf_per_device'].values())
        if 'found_inf' in inspect.signature(optimizer.step).parameters:
            kwargs['found_inf'] = torch.stack(found).sum()
            return optimizer.step(*args, **kwargs)
        if not sum(v.item() for v in found):
            return optimizer.step(*args, **kwargs)
        return None
