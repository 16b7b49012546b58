"""SPMD: one program over every device, partitioned by the shardings of its tensors
(`torch_xla.distributed.spmd`, imported as `xs`)."""
from .xla_sharded_tensor import XLAShard, XLAShardedTensor
from .xla_sharding import (Mesh, HybridMesh, ShardingType, ShardingSpec, mark_sharding,
                           mark_sharding_with_gradients, clear_sharding, get_1d_mesh, wrap_if_sharded,
                           set_global_mesh, get_global_mesh, with_sharding_constraint,
                           annotate_custom_sharding, enable_manual_sharding, disable_manual_sharding,
                           _mark_manual_sharding, wrap_as_sharded_tensor, unwrap_sharded_tensor,
                           XLAPatchedLinear, xla_patched_nn_linear_forward, MarkShardingFunction,
                           apply_backward_optimization_barrier)
from .api import xla_distribute_tensor, xla_distribute_module, auto_policy

__all__ = [
    'XLAShard', 'XLAShardedTensor', 'Mesh', 'HybridMesh', 'ShardingType', 'ShardingSpec', 'mark_sharding',
    'mark_sharding_with_gradients', 'clear_sharding', 'get_1d_mesh', 'wrap_if_sharded', 'set_global_mesh',
    'get_global_mesh', 'with_sharding_constraint', 'annotate_custom_sharding', 'enable_manual_sharding',
    'disable_manual_sharding', 'xla_distribute_tensor', 'xla_distribute_module', 'auto_policy'
]
