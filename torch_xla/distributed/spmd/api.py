"""DTensor's entry points for xla meshes: `torch.distributed.tensor.distribute_tensor` and
`distribute_module` on a DeviceMesh("xla", ...) come here, and give XLAShardedTensors."""
import inspect
import warnings
from typing import Callable, Optional, Sequence

import torch
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.placement_types import Placement, Replicate

import torch_xla
import torch_xla.runtime as xr
from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor, partition_spec_of
from torch_xla.distributed.spmd.xla_sharding import Mesh, ShardingType, mark_sharding


def auto_policy(mod_name, mod, mesh):
    """The partition_fn for xla_distribute_module that leaves the choice of shardings to the
    compiler (auto-sharding)."""
    return


def convert_to_xla_mesh(dt_mesh: DeviceMesh) -> Mesh:
    """The xs.Mesh of a DTensor DeviceMesh over all devices (same device order, shape, names)."""
    xr.use_spmd()
    assert dt_mesh.size() == xr.global_runtime_device_count(), \
        f'the DeviceMesh has {dt_mesh.size()} devices; an xla mesh spans all {xr.global_runtime_device_count()}'
    return Mesh(dt_mesh.mesh.flatten().numpy(), tuple(dt_mesh.mesh.size()), dt_mesh.mesh_dim_names)


def convert_to_xla_partition_spec(tensor: torch.Tensor, placements: Sequence[Placement]) -> tuple:
    """DTensor placements (per mesh axis) as an xla partition spec (per tensor dimension)."""
    xr.use_spmd()
    return partition_spec_of(tensor.dim(), placements)


def xla_distribute_tensor(tensor: torch.Tensor, device_mesh: DeviceMesh,
                          placements: Optional[Sequence[Placement]] = None) -> XLAShardedTensor:
    """`tensor` moved to the xla device and sharded over `device_mesh` as `placements` say
    (replicated where None)."""
    xr.use_spmd()
    assert device_mesh.device_type == 'xla', f'a DeviceMesh of device type {device_mesh.device_type} is not xla'
    mesh = convert_to_xla_mesh(device_mesh)
    if placements is None:
        placements = [Replicate() for _ in range(device_mesh.ndim)]
    if len(placements) != device_mesh.ndim:
        raise ValueError(f'`placements` must have one entry per mesh dimension: got {len(placements)} for '
                         f'a {device_mesh.ndim}-d mesh')
    if type(tensor).__name__ == 'DTensor':
        raise ValueError('Cannot distribute a DTensor with a local tensor on xla devices: the input tensor '
                         'must be global')
    if isinstance(tensor, XLAShardedTensor):
        assert tensor.sharding_type in (None, ShardingType.REPLICATED), \
            'the XLAShardedTensor is already sharded: clear its sharding first (xs.clear_sharding)'
        tensor = tensor.global_tensor
    if not tensor.is_meta:
        tensor = tensor.to('xla')
    return mark_sharding(tensor, mesh, partition_spec_of(tensor.dim(), placements))


def _hook_arity(fn, what: str) -> int:
    n = len(inspect.signature(fn).parameters)
    if n not in (2, 3):
        raise ValueError(f'{what} should take in 3 arguments, but got {n} arguments!')
    if n == 2:
        warnings.warn(f'Deprecating {what} that takes two arguments (inputs, device_mesh), please use '
                      f'{what} that takes in (module, inputs, device_mesh) instead!')
    return n


def xla_distribute_module(module: nn.Module, device_mesh: Optional[DeviceMesh] = None,
                          partition_fn: Optional[Callable[[str, nn.Module, DeviceMesh], None]] = None,
                          input_fn: Optional[Callable[..., None]] = None,
                          output_fn: Optional[Callable[..., None]] = None) -> nn.Module:
    """Shards `module`'s parameters with `partition_fn(name, submodule, mesh)` (which calls
    distribute_tensor on the ones to shard; the rest stay replicated), or, with `auto_policy`,
    moves the module to the xla device and lets the compiler choose (auto-sharding).
    input_fn / output_fn become forward pre-/post-hooks."""
    xr.use_spmd()
    if partition_fn is not None:
        if getattr(partition_fn, '__name__', '') == 'auto_policy':
            assert next(module.parameters()).device.type != 'xla', \
                'auto_policy needs the module on the CPU: xla_distribute_module moves it'
            xr.use_spmd(auto=True)
            module = module.to('xla')
        else:
            for name, submodule in module.named_modules():
                partition_fn(name, submodule, device_mesh)
    if input_fn is not None:
        if _hook_arity(input_fn, 'input_fn') == 2:
            module.register_forward_pre_hook(lambda _, inputs: input_fn(inputs, device_mesh))
        else:
            module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, device_mesh))
    if output_fn is not None:
        if _hook_arity(output_fn, 'output_fn') == 2:
            module.register_forward_hook(lambda mod, inputs, outputs: output_fn(outputs, device_mesh))
        else:
            module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, device_mesh))
    return module
