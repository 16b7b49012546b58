"""PyTorch/XLA's Python XLA builder (`import torch_xla.core.xla_builder as xb`): `Op` values and the
computations made of them, with XLA's operation semantics (openxla.org/xla/operation_semantics).

Here an `Op` holds an xla tensor (or a tuple of Ops), and each builder operation is the torch op
with XLA's meaning: building a computation records its ops into the lazy graph like any other, so
a computation applied to xla tensors (torch_xla.core.xla_op_registry, XlaCallable) compiles with
the program around it. A computation made from shapes alone (create_computation) is a function of
its parameters, run when it is applied. Control flow keeps XLA's results: `conditional` computes
both branches and selects; `while_loop` reads its condition on the host after each iteration (a
graph run per iteration). Operations without a torch form here raise NotImplementedError."""
import torch
from torch.utils import _pytree as pytree

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


class Shape:
    """An XLA shape: {'type': 'f32', 'sizes': (2, 3)}, or a list of them for a tuple."""

    def __init__(self, shape):
        self._shape = shape

    @classmethod
    def create(cls, dtype, sizes, dynamic_dimensions=None):
        shape = {'type': str(dtype), 'sizes': tuple(sizes)}
        if dynamic_dimensions is not None:
            shape['dynamic_dimensions'] = tuple(dynamic_dimensions)
        return Shape(shape)

    @property
    def shape(self):
        return self._shape

    def is_tuple(self):
        return isinstance(self._shape, (list, tuple))

    def tuple_size(self):
        assert self.is_tuple()
        return len(self._shape)

    def tuple_shape(self, index):
        assert self.is_tuple()
        return self._shape[index]

    def is_dynamic(self):
        return 'dynamic_dimensions' in self._shape

    def as_scalar(self):
        return Shape.create(self.dtype, ())

    @property
    def rank(self):
        return len(self._shape['sizes'])

    @property
    def sizes(self):
        return self._shape['sizes']

    @property
    def dynamic_dimensions(self):
        return self._shape.get('dynamic_dimensions', None)

    @property
    def dtype(self):
        return self._shape['type']


class Builder:
    """What a computation's constants are made on: a name and a device."""

    def __init__(self, name, device=None):
        self.name = name
        self.device = torch.device(device) if device is not None else torch_xla.device()


def create_builder(name):
    return Builder(name)


def mkshape(dtype, sizes, dynamic_dimensions=None):
    return Shape.create(dtype, sizes, dynamic_dimensions=dynamic_dimensions)


def tensor_shape(tensor, device=''):
    if isinstance(tensor, (list, tuple)):
        return [tensor_shape(t) for t in tensor]
    return Shape.create(Op.from_torch_type(tensor.dtype), tensor.shape)


def _unsupported(what):
    raise NotImplementedError(f'torch_xla.core.xla_builder: {what} has no torch form here; write that part of '
                              'the computation with torch ops on xla tensors')


def _binary(torch_fn):
    def method(self, rhs):
        return Op(torch_fn(self.value, rhs.value), self._builder)
    return method


def _unary(torch_fn):
    def method(self):
        return Op(torch_fn(self.value), self._builder)
    return method


class Op:
    """An XLA builder value: an xla tensor, or a tuple of Ops (Op.tuple)."""

    def __init__(self, value, builder=None):
        self.value = value
        self._builder = builder if builder is not None else Builder('op', _device_of(value))

    def is_tuple(self):
        return isinstance(self.value, tuple)

    def shape(self):
        if self.is_tuple():
            return Shape([op.shape().shape for op in self.value])
        return tensor_shape(self.value)

    def builder(self):
        return self._builder

    def build(self, name):
        return Computation(name, lambda: self, ())

    # Elementwise arithmetic and comparisons (XLA's implicit broadcasting of scalars included).
    __add__ = _binary(torch.add)
    __sub__ = _binary(torch.sub)
    __mul__ = _binary(torch.mul)
    __matmul__ = _binary(torch.matmul)
    __pow__ = _binary(torch.pow)
    __mod__ = _binary(torch.fmod)  # XLA's Rem takes the dividend's sign
    __and__ = _binary(torch.bitwise_and)
    __or__ = _binary(torch.bitwise_or)
    __xor__ = _binary(torch.bitwise_xor)
    __eq__ = _binary(torch.eq)
    __ne__ = _binary(torch.ne)
    __le__ = _binary(torch.le)
    __lt__ = _binary(torch.lt)
    __ge__ = _binary(torch.ge)
    __gt__ = _binary(torch.gt)
    __lshift__ = _binary(torch.bitwise_left_shift)
    __rshift__ = _binary(torch.bitwise_right_shift)
    __hash__ = object.__hash__
    __neg__ = _unary(torch.neg)
    atan2 = _binary(torch.atan2)
    max = _binary(torch.maximum)
    min = _binary(torch.minimum)
    erfinf = _unary(torch.erfinv)

    def __truediv__(self, rhs):
        # XLA's Div of integers rounds toward zero.
        mode = None if self.value.is_floating_point() or self.value.is_complex() else 'trunc'
        return Op(torch.div(self.value, rhs.value, rounding_mode=mode), self._builder)

    def __invert__(self):
        return Op(torch.logical_not(self.value) if self.value.dtype == torch.bool else
                  torch.bitwise_not(self.value), self._builder)

    __not__ = __invert__

    def _like(self, value):
        return Op(value, self._builder)

    # Shapes.
    def reshape(self, sizes, dimensions=None, inferred_dimension=None):
        value = self.value if dimensions is None else self.value.permute(*dimensions)
        return self._like(value.reshape(*sizes))

    def broadcast(self, sizes):
        """New leading dimensions `sizes`, the operand's after them."""
        return self._like(self.value.expand(*sizes, *self.value.shape).clone())

    def broadcast_in_dim(self, sizes, dimensions):
        """The operand's dimension k becomes dimension dimensions[k] of a result of `sizes`."""
        view = [1] * len(sizes)
        for k, d in enumerate(dimensions):
            view[d] = self.value.shape[k]
        return self._like(self.value.reshape(view).expand(*sizes).clone())

    def slice(self, start_indices, limit_indices, strides=None):
        strides = strides or [1] * len(start_indices)
        index = tuple(slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides))
        return self._like(self.value[index].clone())

    def slice_in_dim(self, start_index, limit_index, dimno, stride=1):
        return self._like(self.value.narrow(dimno, start_index, limit_index - start_index)[
            (slice(None),) * dimno + (slice(None, None, stride),)].clone())

    def _clamped_starts(self, start_indices, sizes):
        # XLA clamps each start so that the slice stays inside the operand.
        starts = []
        for k, (s, size) in enumerate(zip(start_indices, sizes)):
            limit = self.value.shape[k] - size
            starts.append(torch.clamp(s.value.reshape(()).long(), 0, limit))
        return starts

    def dynamic_slice(self, start_indices, slice_sizes):
        value = self.value
        for k, start in enumerate(self._clamped_starts(start_indices, slice_sizes)):
            index = start + torch.arange(slice_sizes[k], device=value.device)
            value = torch.index_select(value, k, index)
        return self._like(value)

    def dynamic_update_slice(self, update, start_indices):
        index = [start + torch.arange(n, device=self.value.device)
                 for start, n in zip(self._clamped_starts(start_indices, update.value.shape), update.value.shape)]
        grids = torch.meshgrid(*index, indexing='ij') if index else ()
        out = self.value.clone()
        out[tuple(grids)] = update.value
        return self._like(out)

    def transpose(self, permutation):
        return self._like(self.value.permute(*permutation).contiguous())

    def rev(self, dimensions):
        return self._like(torch.flip(self.value, list(dimensions)))

    def cast(self, to_type):
        return self._like(self.value.to(Op.to_torch_type(to_type)))

    def bitcast(self, to_type):
        return self._like(self.value.view(Op.to_torch_type(to_type)))

    def pad(self, value, config):
        """config: (low, high, interior) per dimension; negative low/high cut."""
        if any(interior for _, _, interior in config):
            _unsupported('Op.pad with interior padding')
        flat = []
        for low, high, _ in reversed(list(config)):
            flat += [low, high]
        return self._like(torch.nn.functional.pad(self.value, flat, value=value.value.item()))

    def select(self, true_value, false_value):
        return self._like(torch.where(self.value, true_value.value, false_value.value))

    def clamp(self, min_value, max_value):
        return self._like(torch.clamp(self.value, min_value.value, max_value.value))

    def triangualr_solve(self, b, left_side=None, lower=None, unit_diagonal=None, transpose_a=None):
        """Solves op(A) x = b (left_side) or x op(A) = b for x, A = self triangular; op(A) is A or
        its transpose (transpose_a). PyTorch/XLA's spelling of the name."""
        a = self.value.mT if transpose_a else self.value
        upper = bool(lower) == bool(transpose_a)
        return self._like(torch.linalg.solve_triangular(a, b.value, upper=upper, left=bool(left_side),
                                                        unitriangular=bool(unit_diagonal)))

    triangular_solve = triangualr_solve

    def get_tuple_element(self, index):
        if not self.is_tuple():
            raise ValueError(f'get_tuple_element({index}) of an Op that is not a tuple')
        return self.value[index]

    def get_dimension_size(self, dimension):
        return Op.scalar(self._builder, self.value.shape[dimension], dtype=Type.S32)

    def scalar_like(self, value):
        return self._like(torch.full_like(self.value, value))

    def zeros_like(self):
        return self.scalar_like(0)

    def ones_like(self):
        return self.scalar_like(1)

    # Reductions with a computation of two scalars (an associative one, as XLA requires).
    def reduce(self, init_value, computation, dimensions):
        fn = Op.wrap_function(computation)
        value = self.value
        for d in sorted(dimensions, reverse=True):
            if value.shape[d] == 0:  # nothing to combine: the init value
                value = init_value.value.expand(value.shape[:d] + value.shape[d + 1:]).clone()
                continue
            value = _fold(value, d, lambda a, b: fn(self._like(a), self._like(b)).value)
        # The init value joins once (XLA lets it join any number of times: an identity).
        return fn(self._like(init_value.value.expand(value.shape)), self._like(value))

    def reduce_all(self, init_value, computation):
        return self.reduce(init_value, computation, range(self.value.dim()))

    # Control flow.
    def conditional(self, true_operand, false_operand, true_computation, false_computation):
        """Both branches computed; each result element taken from the one the predicate picks."""
        taken = _apply(true_computation, true_operand)
        other = _apply(false_computation, false_operand)
        pred = self.value.reshape(())
        return _zip_ops(lambda t, f: torch.where(pred, t, f), taken, other)

    def mkconditional(self, ops, true_fn, false_fn, **kwargs):
        operands = Op.tuple(ops, self._builder)
        return self.conditional(operands, operands, true_fn, false_fn)

    def while_loop(self, condition_computation, body_computation):
        state = self
        while bool(_apply(condition_computation, state).value.reshape(()).item()):
            state = _apply(body_computation, state)
        return state

    @classmethod
    def mkwhile(cls, ops, condition_fn, body_fn, **kwargs):
        return Op.tuple(ops).while_loop(condition_fn, body_fn)

    # Leaves and tuples.
    @classmethod
    def wrap_function(cls, fn):
        """`fn` as a computation of one Op: a tuple argument is spread over fn's parameters, and a
        tuple or list result made one Op."""
        if isinstance(fn, Computation):
            fn = fn.fn

        def wrapper(*args, **kwargs):
            if len(args) == 1 and args[0].is_tuple():
                args = args[0].value
            result = fn(*args, **kwargs)
            return Op.tuple(result) if isinstance(result, (tuple, list)) else result

        return wrapper

    @classmethod
    def make_computation(cls, name, computation, args_or_shapes, **kwargs):
        if isinstance(computation, Computation):
            return computation
        shapes = [a if isinstance(a, Shape) else a.shape() for a in args_or_shapes]
        return create_computation(name, Op.wrap_function(computation), shapes, **kwargs)

    @classmethod
    def tuple(cls, ops, builder=None):
        ops = tuple(ops)
        return Op(ops, builder or (ops[0].builder() if ops else Builder('tuple')))

    @classmethod
    def concat_in_dim(cls, ops, dimension, builder=None):
        return Op(torch.cat([op.value for op in ops], dimension), builder or ops[0].builder())

    @classmethod
    def call(cls, computation, ops, builder=None):
        return Op.wrap_function(computation)(*ops)

    @classmethod
    def constant(cls, builder, value):
        return Op(torch.as_tensor(value).to(builder.device), builder)

    @classmethod
    def scalar(cls, builder, value, dtype=None):
        return Op(torch.tensor(value, dtype=cls.to_torch_type(dtype), device=builder.device), builder)

    @classmethod
    def zero(cls, builder, dtype=None):
        return cls.scalar(builder, 0, dtype=dtype)

    @classmethod
    def one(cls, builder, dtype=None):
        return cls.scalar(builder, 1, dtype=dtype)

    @classmethod
    def iota(cls, builder, shape, iota_dimension):
        shape = shape if isinstance(shape, Shape) else Shape(shape)
        sizes = shape.sizes
        view = [1] * len(sizes)
        view[iota_dimension] = sizes[iota_dimension]
        ramp = torch.arange(sizes[iota_dimension], device=builder.device, dtype=cls.to_torch_type(shape.dtype))
        return Op(ramp.reshape(view).expand(*sizes).clone(), builder)

    @classmethod
    def to_torch_type(cls, dtype):
        return _XLA_PT_TYPE_MAP[dtype] if dtype else torch.float32

    @classmethod
    def from_torch_type(cls, dtype):
        return _PT_XLA_TYPE_MAP[dtype]

    def __getattr__(self, name):
        if name in _WITHOUT_TORCH_FORM:
            _unsupported(f'Op.{name}')
        raise AttributeError(f"'Op' object has no attribute '{name}'")


for _name in ('acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'erfc', 'exp', 'expm1', 'floor', 'log', 'log1p',
              'sqrt', 'rsqrt', 'sin', 'sinh', 'tan', 'tanh', 'real', 'imag', 'conj'):
    setattr(Op, _name, _unary(getattr(torch, _name)))

# PyTorch/XLA's builder operations that have no torch form here.
_WITHOUT_TORCH_FORM = frozenset((
    'conv', 'conv_with_general_padding', 'conv_with_general_dimensions', 'conv_general', 'conv_general_dilated',
    'select_and_scatter', 'select_and_scatter_with_general_padding', 'max_pool', 'reduce_window', 'gather',
    'scatter', 'dynamic_reshape', 'set_dimension_size', 'clz', 'sort', 'map'))


class Computation:
    """A function of Ops made into a computation (`create_computation`): applied to Ops or xla
    tensors, it runs its function on them."""

    def __init__(self, name, fn, shapes, **kwargs):
        self.name = name
        self.fn = lambda *args: fn(*args, **kwargs)
        self.shapes = list(shapes)

    def __call__(self, *args):
        ops = [a if isinstance(a, Op) else Op(a) for a in args]
        return self.fn(*ops)


def create_computation(name, fn, shapes, **kwargs):
    return Computation(name, fn, shapes, **kwargs)


def get_computation_hlo(computation):
    """The HLO of `computation` applied to placeholder inputs of its parameters' shapes."""
    params = [create_placeholder_tensor(s.sizes, s.dtype) for s in computation.shapes]
    out = computation(*params)
    return torch_xla._XLAC._get_xla_tensors_hlo(list(_tensors(out)))


def _device_of(value):
    if isinstance(value, tuple):
        return value[0].value.device if value else None
    return value.device


def _apply(computation, operand):
    result = Op.wrap_function(computation)(operand)
    return result if isinstance(result, Op) else Op.tuple(result)


def _zip_ops(fn, a, b):
    if a.is_tuple():
        return Op.tuple([_zip_ops(fn, x, y) for x, y in zip(a.value, b.value)], a.builder())
    return Op(fn(a.value, b.value), a.builder())


def _fold(value, dim, combine):
    """`value` combined along `dim` pairwise, halving it each round, down to one slice."""
    while value.shape[dim] > 1:
        n = value.shape[dim]
        half = n // 2
        head = combine(value.narrow(dim, 0, half), value.narrow(dim, half, half))
        value = torch.cat([head, value.narrow(dim, 2 * half, n - 2 * half)], dim) if n % 2 else head
    return value.squeeze(dim)


def _tensors(op):
    if op.is_tuple():
        for o in op.value:
            yield from _tensors(o)
    else:
        yield op.value


def _results(op):
    """An Op's xla tensors: a tuple's as a tuple (nested tuples flattened), else the tensor."""
    return tuple(_tensors(op)) if op.is_tuple() else op.value


class FlattenedInputFunc:
    """`fn` called on one flat list of leaves: `preprocess(args)` flattens a call's arguments (any
    nesting of dicts, lists and tuples), `flat_call` calls fn with them rebuilt and flattens its
    result, `postprocess` rebuilds that result."""

    def __init__(self, fn):
        self._fn = fn
        self._in_spec = None
        self._out_spec = None

    def preprocess(self, args):
        leaves, self._in_spec = pytree.tree_flatten(tuple(args))
        return leaves

    def flat_call(self, flat_args):
        args = pytree.tree_unflatten(list(flat_args), self._in_spec)
        leaves, self._out_spec = pytree.tree_flatten(self._fn(*args))
        return leaves

    def postprocess(self, flat_results):
        return pytree.tree_unflatten(list(flat_results), self._out_spec)


class XlaCallable:
    """`fn`, written with Ops, called on xla tensors (nested in lists, tuples and dicts): its
    operations record into the lazy graph; returns its result's tensors in its structure."""

    def __init__(self, fn):
        self._flat = FlattenedInputFunc(lambda *args: self._call(fn, args))

    @staticmethod
    def _call(fn, args):
        ops = pytree.tree_map(lambda t: Op(t) if isinstance(t, torch.Tensor) else t, args)
        result = fn(*ops)
        return pytree.tree_map(lambda o: _results(o) if isinstance(o, Op) else o, result,
                               is_leaf=lambda o: isinstance(o, Op))

    def __call__(self, *args):
        return self._flat.postprocess(self._flat.flat_call(self._flat.preprocess(args)))


def create_placeholder_tensor(shape, dtype):
    """A tensor of `shape` and `dtype` on the current xla device that holds no value: it stands
    for an input while graphs reading it are traced and dumped (`_get_xla_tensors_text`,
    `_get_xla_tensors_hlo`). Reading it, or running a graph that reads it, raises RuntimeError."""
    if isinstance(dtype, str):
        dtype = Op.to_torch_type(dtype)
    return torch_xla._XLAC._xla_create_placeholder_tensor(list(shape), dtype)
