"""PyTorch/XLA's experimental entry points that apply to a CPU device (see eager.py)."""
from .eager import eager_mode, eager_mode_context, is_eager_mode  # noqa: F401
from . import dynamo_set_buffer_donor as _dynamo_set_buffer_donor  # noqa: F401,E402  (torch.ops.xla.dynamo_set_buffer_donor_)

__all__ = ['eager_mode', 'is_eager_mode', 'eager_mode_context']
