"""Fully sharded data parallelism (`torch_xla.distributed.fsdp`): XlaFullyShardedDataParallel over
replicas, checkpoint consolidation, the auto-wrap policies, gradient checkpointing of modules, the
nn.Linear patch. The SPMD wrapper is torch_xla.experimental.spmd_fully_sharded_data_parallel."""
from .utils import apply_xla_patch_to_nn_linear, checkpoint_module
from .xla_fully_sharded_data_parallel import (XlaFullyShardedDataParallel, consolidate_sharded_model_checkpoints,
                                              consolidate_sharded_state_dicts)
from .wrap import (always_wrap_policy, lambda_auto_wrap_policy, recursive_wrap, size_based_auto_wrap_policy,
                   transformer_auto_wrap_policy)

__all__ = ['XlaFullyShardedDataParallel', 'consolidate_sharded_model_checkpoints', 'consolidate_sharded_state_dicts',
           'apply_xla_patch_to_nn_linear', 'checkpoint_module', 'always_wrap_policy', 'lambda_auto_wrap_policy', 'recursive_wrap', 'size_based_auto_wrap_policy',
           'transformer_auto_wrap_policy']
