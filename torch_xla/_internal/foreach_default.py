"""xla tensors take torch's foreach implementations by default, as CUDA tensors do.

`torch.optim`'s optimizers (`foreach=None`), `clip_grad_norm_`/`clip_grad_value_` and
`swa_utils` pick their foreach path only for the device types torch lists as having foreach
kernels (CUDA, XPU, MTIA, the PrivateUse1 backend); anything else runs their Python loop, one op
per parameter per update term. On the xla device every op of that loop is traced on the host,
so the loop's Python is host time a training step pays on every call, while the foreach ops
(`csrc/aten/functional_inplace.cc`) record the same per-tensor ops in one call. The two paths
compute the same formulas in the same order per tensor (PyTorch keeps them equivalent; its tests
compare them), so results do not change, only the host time.

torch's capturable foreach paths (Adam, AdamW, ... with capturable=True) accept no xla tensors
while their single-tensor paths do, so a param group that asks for capturable and leaves foreach
unset keeps the single-tensor path on xla, as before.

TXLA_FOREACH_DEFAULT=0 keeps torch's own choice (the Python loop, as on PyTorch/XLA).
"""
import functools

from . import config

_XLA = 'xla'


def install():
    if not config.TXLA_FOREACH_DEFAULT.get():
        return
    from torch.utils import _foreach_utils
    original = _foreach_utils._get_foreach_kernels_supported_devices

    @functools.wraps(original)
    def supported_devices():
        devices = original()
        return devices if _XLA in devices else devices + [_XLA]

    # The optimizers' modules bound the function by name at import; clip_grad looks it up
    # through _foreach_utils at every call.
    _foreach_utils._get_foreach_kernels_supported_devices = supported_devices
    import torch.optim.optimizer as optimizer
    import torch.optim.swa_utils as swa_utils
    for module in (optimizer, swa_utils):
        if getattr(module, '_get_foreach_kernels_supported_devices', None) is original:
            module._get_foreach_kernels_supported_devices = supported_devices

    _keep_capturable_groups_single_tensor()


def _keep_capturable_groups_single_tensor():
    import torch
    add_param_group = torch.optim.Optimizer.add_param_group

    @functools.wraps(add_param_group)
    def add(self, param_group):
        add_param_group(self, param_group)
        group = self.param_groups[-1]
        if group.get('capturable') and group.get('foreach', False) is None and any(
                p.device.type == _XLA for p in group['params']):
            group['foreach'] = False

    torch.optim.Optimizer.add_param_group = add
