"""Fully sharded data parallelism helpers (`torch_xla.distributed.fsdp`): the auto-wrap policies
FSDP wrappers use, gradient checkpointing of modules, the nn.Linear patch. The SPMD wrapper is
torch_xla.experimental.spmd_fully_sharded_data_parallel."""
from .utils import apply_xla_patch_to_nn_linear, checkpoint_module
from .wrap import (always_wrap_policy, lambda_auto_wrap_policy, recursive_wrap, size_based_auto_wrap_policy,
                   transformer_auto_wrap_policy)

__all__ = ['apply_xla_patch_to_nn_linear', 'checkpoint_module', 'always_wrap_policy', 'lambda_auto_wrap_policy', 'recursive_wrap', 'size_based_auto_wrap_policy',
           'transformer_auto_wrap_policy']
