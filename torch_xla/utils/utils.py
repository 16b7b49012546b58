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
