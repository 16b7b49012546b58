"""PyTorch/XLA's Python XLA builder names: the element-type names XLA uses and their torch
dtypes. Building XLA computations from Python (`Op`'s graph constructors, used with
torch_xla.core.xla_op_registry) is not supported here: the device's programs come from the
recorded torch ops, and those calls raise, saying so. create_placeholder_tensor makes inputs for
graphs that are only traced and dumped."""
import torch

import torch_xla


class Type:
    F32 = 'f32'
    F64 = 'f64'
    BF16 = 'bf16'
    F16 = 'f16'
    U8 = 'u8'
    S8 = 's8'
    U16 = 'u16'
    S16 = 's16'
    U32 = 'u32'
    S32 = 's32'
    U64 = 'u64'
    S64 = 's64'
    C64 = 'c64'
    C128 = 'c128'
    PRED = 'pred'


_XLA_PT_TYPE_MAP = {
    Type.F32: torch.float32, Type.F64: torch.float64, Type.BF16: torch.bfloat16, Type.F16: torch.float16,
    Type.U8: torch.uint8, Type.S8: torch.int8, Type.U16: torch.uint16, Type.S16: torch.int16,
    Type.U32: torch.uint32, Type.S32: torch.int32, Type.U64: torch.uint64, Type.S64: torch.int64,
    Type.C64: torch.complex64, Type.C128: torch.complex128, Type.PRED: torch.bool,
}
_PT_XLA_TYPE_MAP = {pt: xla for xla, pt in _XLA_PT_TYPE_MAP.items()}


def _unsupported(what):
    raise NotImplementedError(f'torch_xla.core.xla_builder.{what}: building XLA computations from Python is not '
                              'supported; write the computation with torch ops on xla tensors')


class Op:
    """An XLA builder value (PyTorch/XLA). Only the dtype conversions exist here."""

    def __init__(self, *args, **kwargs):
        _unsupported('Op')

    @classmethod
    def to_torch_type(cls, dtype):
        return _XLA_PT_TYPE_MAP[dtype] if dtype else torch.float32

    @classmethod
    def from_torch_type(cls, dtype):
        return _PT_XLA_TYPE_MAP[dtype]

    def __getattr__(self, name):
        _unsupported(f'Op.{name}')


for _name in ('tuple', 'scalar', 'mkwhile', 'mkconditional', 'constant', 'zeros', 'full', 'iota', 'reduce',
              'call', 'concat', 'select', 'pad', 'dot', 'cast', 'reshape', 'broadcast', 'slice'):
    setattr(Op, _name, classmethod(lambda cls, *a, _n=_name, **k: _unsupported(f'Op.{_n}')))


def create_builder(name):
    _unsupported('create_builder')


def create_computation(name, fn, shapes, **kwargs):
    _unsupported('create_computation')


def create_placeholder_tensor(shape, dtype):
    """A tensor of `shape` and `dtype` on the current xla device that holds no value: it stands
    for an input while graphs reading it are traced and dumped (`_get_xla_tensors_text`,
    `_get_xla_tensors_hlo`). Reading it, or running a graph that reads it, raises RuntimeError."""
    if isinstance(dtype, str):
        dtype = Op.to_torch_type(dtype)
    return torch_xla._XLAC._xla_create_placeholder_tensor(list(shape), dtype)
