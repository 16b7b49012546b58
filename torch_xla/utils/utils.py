"""Small utilities PyTorch/XLA scripts use."""
from torch_xla._internal import config


class SampleGenerator:
    """Yields `data` `sample_count` times: synthetic input for benchmarks and smoke tests."""

    def __init__(self, data, sample_count):
        self._data = data
        self._sample_count = sample_count
        self._count = 0

    def __iter__(self):
        return SampleGenerator(self._data, self._sample_count)

    def __len__(self):
        return self._sample_count

    def __next__(self):
        return self.next()

    def next(self):
        if self._count >= self._sample_count:
            raise StopIteration
        self._count += 1
        return self._data


def getenv_as(name, type, defval=None):
    """The environment variable `name` converted to `type` (bools from integers: "0"/"1"), or
    `defval` when it is not set (as PyTorch/XLA's helper)."""
    return config.Variable(name, type, defval, f'read as {type.__name__}').get()


def as_list(t):
    """`t` itself if it is a list or tuple, else `[t]`."""
    return t if isinstance(t, (tuple, list)) else [t]


class TmpFolder:
    """A temporary directory (its path in `.name`), removed with everything in it when this
    object is collected."""

    def __init__(self):
        import tempfile
        self._dir = tempfile.TemporaryDirectory()
        self.name = self._dir.name


class FnDataGenerator:
    """`count` batches of synthetic data: each `gen_tensor(batch_size, *dims)` with its target
    `func(data)`, as (data, target) pairs."""

    def __init__(self, func, batch_size, gen_tensor, dims=None, count=1):
        self._func = func
        self._batch_size = batch_size
        self._gen_tensor = gen_tensor
        self._dims = list(dims) if dims else [1]
        self._count = count
        self._emitted = 0

    def __len__(self):
        return self._count

    def __iter__(self):
        return FnDataGenerator(self._func, self._batch_size, self._gen_tensor, self._dims, self._count)

    def __next__(self):
        return self.next()

    def next(self):
        if self._emitted >= self._count:
            raise StopIteration
        self._emitted += 1
        data = self._gen_tensor(self._batch_size, *self._dims)
        return data, self._func(data)


class DataWrapper:
    """A value that holds tensors inside a structure send_cpu_data_to_device cannot see into
    (a PackedSequence): a subclass lists them (get_tensors) and builds the value again from their
    moved copies, in the same order (from_tensors)."""

    def get_tensors(self):
        raise NotImplementedError('DataWrapper subclasses list their tensors in get_tensors()')

    def from_tensors(self, tensors):
        raise NotImplementedError('DataWrapper subclasses rebuild their value in from_tensors(tensors)')


class TimedScope:
    """A `with` block timed: on leaving, printfn(f'{msg}{seconds:.3f}s') (no report when printfn is
    None)."""

    def __init__(self, msg='', printfn=print):
        self._msg = msg
        self._printfn = printfn
        self._start = None

    def __enter__(self):
        import time
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        import time
        if self._printfn is not None:
            self._printfn(f'{self._msg}{time.perf_counter() - self._start:.3f}s')
        return False


def timed(fn, msg='', printfn=print):
    """fn() run inside a TimedScope: its result, its time reported through printfn."""
    with TimedScope(msg=msg, printfn=printfn):
        return fn()


def _children(value):
    """What for_each_instance walks into: dicts' keys and values, the items of lists, tuples and
    sets, and an object's attributes (not those of classes, modules and functions)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield v
    elif isinstance(value, (list, tuple, set, frozenset)):
        yield from value
    elif _walks_attributes(value):
        yield from vars(value).values()


def _walks_attributes(value):
    """Whether for_each_instance walks into the object's attributes: instances, not classes,
    modules or functions."""
    import types
    return hasattr(value, '__dict__') and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType))


def for_each_instance(value, select_fn, fn):
    """Calls fn(x) for every object x inside `value` that select_fn picks, once per object (by
    identity, so shared and cyclic references are walked once), in a depth-first order that
    for_each_instance_rewrite follows too."""
    seen = set()

    def visit(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        if select_fn(v):
            fn(v)
            return
        for child in _children(v):
            visit(child)

    visit(value)


def for_each_instance_rewrite(value, select_fn, fn):
    """`value` with every object select_fn picks replaced by fn(x), fn called once per object
    in for_each_instance's order. Dicts, lists, tuples (namedtuples too) and sets are rebuilt;
    other objects keep their identity and have their attributes rewritten in place."""
    done = {}

    def rewrite(v):
        key = id(v)
        if key in done:
            return done[key]
        if select_fn(v):
            done[key] = fn(v)
            return done[key]
        if isinstance(v, dict):
            out = type(v)()
            done[key] = out
            for k, x in v.items():
                new_k = rewrite(k)
                out[new_k] = rewrite(x)
            return out
        if isinstance(v, list):
            out = type(v)()
            done[key] = out
            out.extend(rewrite(x) for x in v)
            return out
        done[key] = v  # immutable containers are built after their items: a cycle back meets the old one
        if isinstance(v, (set, frozenset)):
            done[key] = type(v)(rewrite(x) for x in v)
        elif isinstance(v, tuple):
            items = [rewrite(x) for x in v]
            done[key] = type(v)(*items) if hasattr(v, '_fields') else type(v)(items)
        elif _walks_attributes(v):
            for name, x in list(vars(v).items()):
                setattr(v, name, rewrite(x))
        return done[key]

    return rewrite(value)
