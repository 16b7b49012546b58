"""PyTorch/XLA's experimental entry points that apply to a CPU device (see eager.py)."""
from .eager import eager_mode, eager_mode_context, is_eager_mode  # noqa: F401

__all__ = ['eager_mode', 'is_eager_mode', 'eager_mode_context']
