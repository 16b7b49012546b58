"""Corrections to PyTorch 1.13 that can only be made from Python (the C++ ones are in
csrc/aten/functionalize_fixes.cc). Nothing here is installed on torch 2.x, which fixed them.

`.data` of a view: 1.13's FunctionalTensorWrapper drops the view chain in the shallow copy that
`Tensor.data` makes (it calls shallow_copy_and_detach directly, past the dispatcher where the
`detach` fix lives), so `base[1].data.fill_(3)` replaced the whole base by the row. For an xla
view, `.data` is the detach that keeps the chain (same values, shares storage, no grad).
"""
import torch


def install():
    if int(torch.__version__.split('.')[0]) >= 2:
        return
    base = torch._C._TensorBase.data

    def get_data(self):
        if self._is_view() and self.device.type == 'xla':
            return self.detach()
        return base.__get__(self)

    def set_data(self, value):
        base.__set__(self, value)

    torch.Tensor.data = property(get_data, set_data, doc=base.__doc__)
