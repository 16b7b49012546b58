"""FSDPv2: fully sharded data parallelism through SPMD (`SpmdFullyShardedDataParallel`).

Every parameter of the wrapped module is sharded over the mesh's 'fsdp' axis (along its largest
dimension) and the module's output along its batch; the compiler's partitioner brings each weight
to where it is used and sums each gradient over the devices that hold parts of the batch. No
process group and no flattened parameters: the shardings are the whole method."""
from typing import Any, Callable, Optional
import warnings

import torch
import torch.nn as nn

import torch_xla
import torch_xla.distributed.spmd as spmd
from torch_xla.distributed.fsdp.wrap import recursive_wrap


def _prepare_spmd_partition_spec(param, extra_data_axis=None, shard_maximal=False):
    spec = [None] * len(param.shape)
    if not spec:
        return tuple(spec)
    index = list(param.shape).index(max(param.shape)) if shard_maximal else 0
    spec[index] = (extra_data_axis, 'fsdp') if extra_data_axis else 'fsdp'
    return tuple(spec)


class SpmdFullyShardedDataParallel(nn.Module):
    """Wraps `module` for FSDP over `mesh` (or the global mesh), which needs an 'fsdp' axis.

    shard_output(output, mesh) shards the forward's output (default: its first tensor, batch over
    'fsdp'); auto_wrap_policy wraps submodules as units of their own (with
    auto_wrapper_callable, default this class); extra_data_axis shards batch and parameters over
    a data axis too."""

    def __init__(self, module: nn.Module, *, mesh: Optional[spmd.Mesh] = None,
                 shard_output: Optional[Callable] = None, auto_wrap_policy: Optional[Callable] = None,
                 auto_wrapper_callable: Optional[Callable] = None, extra_data_axis: Optional[str] = None):
        if isinstance(module, SpmdFullyShardedDataParallel):
            raise RuntimeError('Cannot wrap a module that is already wrapped with FSDP: wrap the inner '
                               'modules first, then the outer one.')
        forward = getattr(type(module), 'forward', None)
        if forward is None or forward is nn.Module.forward:
            raise RuntimeError('The module wrapped by FSDP must define a `forward` method (not an '
                               'nn.ModuleList or nn.ModuleDict).')
        if mesh is None:
            mesh = spmd.get_global_mesh()
            if mesh is None:
                raise ValueError('No mesh is provided and no global mesh is set. Please provide a mesh.')
        if mesh.axis_names is None or 'fsdp' not in mesh.axis_names:
            raise ValueError("The mesh must have an axis named 'fsdp'.")
        if extra_data_axis and extra_data_axis not in mesh.axis_names:
            raise ValueError(f'The provided {extra_data_axis} axis is not in the mesh.')
        super().__init__()
        if auto_wrap_policy is not None:
            for name, sub in module.named_modules():
                if isinstance(sub, SpmdFullyShardedDataParallel):
                    raise ValueError(f'Expected {name} to NOT be SpmdFullyShardedDataParallel if using an '
                                     '`auto_wrap_policy`')
            recursive_wrap(module=module, auto_wrap_policy=auto_wrap_policy,
                           wrapper_cls=auto_wrapper_callable or SpmdFullyShardedDataParallel,
                           ignored_modules=set(), ignored_params=set(), only_wrap_children=True, mesh=mesh,
                           shard_output=shard_output)
        self._orig_module = module.to('xla')
        self._mesh = mesh
        for param in self._orig_module.parameters():
            if torch_xla._XLAC._get_xla_sharding_spec(param) == '':
                spmd.mark_sharding(param, mesh, _prepare_spmd_partition_spec(param, extra_data_axis,
                                                                             shard_maximal=True))
        spmd.xla_sharding.apply_backward_optimization_barrier(self._orig_module)
        if shard_output is None:

            def shard_output(output, mesh):
                first = output
                if isinstance(output, tuple):
                    first = output[0] if isinstance(output[0], torch.Tensor) else None
                    warnings.warn('The output is a tuple: only its first element is sharded; pass '
                                  'shard_output to shard others.')
                if not isinstance(first, torch.Tensor):
                    raise RuntimeError(f'The output type is not supported: {type(output)}. Please provide your '
                                       'own shard_output callable.')
                spmd.mark_sharding(first, mesh, _prepare_spmd_partition_spec(first, extra_data_axis))

        self._shard_output = shard_output

    @property
    def module(self) -> nn.Module:
        return self._orig_module

    def forward(self, *args: Any, **kwargs: Any):
        output = self.module(*args, **kwargs)
        self._shard_output(output, self._mesh)
        return output

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)

    def __getitem__(self, key: int) -> nn.Module:
        return self.module.__getitem__(key)
