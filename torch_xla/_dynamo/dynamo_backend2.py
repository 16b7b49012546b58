"""PyTorch/XLA's second dynamo backend, which lowers FX graphs through JAX (torchax). Neither JAX
nor torchax exists here: the backend raises, naming what it needs; `backend='openxla'` is this
project's torch.compile backend."""


def dynamo_backend(fx, args):
    raise NotImplementedError("torch_xla._dynamo.dynamo_backend2 compiles through JAX and torchax, which this "
                              "build does not have: use torch.compile(backend='openxla')")
