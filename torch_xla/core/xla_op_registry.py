"""PyTorch/XLA's registry of ops written with its XLA builder (torch_xla.core.xla_builder). This
project compiles its own HLO and has no XLA builder for Python, so defining such an op raises."""


class Op(object):

    def __init__(self, name, opfn):
        raise NotImplementedError('torch_xla.core.xla_op_registry.Op (ops written with the XLA '
                                  'builder); write the op with torch operations instead')


def register(name, opfn):
    return Op(name, opfn)
