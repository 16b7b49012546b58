"""DLPack exchange of xla tensors (PyTorch/XLA's torch_xla.utils.dlpack). Not supported yet: an
xla tensor's value may still be pending in a lazy graph and its buffer is the device's, so
sharing it zero-copy needs a device entry this project does not have; both calls raise."""


def to_dlpack(xla_tensor):
    raise NotImplementedError('torch_xla.utils.dlpack.to_dlpack is not supported yet: copy with tensor.cpu() '
                              'and use torch.utils.dlpack.to_dlpack')


def from_dlpack(ext_tensor):
    raise NotImplementedError('torch_xla.utils.dlpack.from_dlpack is not supported yet: use '
                              "torch.utils.dlpack.from_dlpack, then .to('xla')")
