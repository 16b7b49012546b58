"""Same module as torch_xla.core.dynamo_bridge, under PyTorch/XLA 2.9's other name for it."""
from torch_xla.core.dynamo_bridge import CompiledGraph, extract_compiled_graph  # noqa: F401
