"""Fully sharded data parallelism over replicas (PyTorch/XLA's `XlaFullyShardedDataParallel`,
FSDP v1; the SPMD one is torch_xla.experimental.spmd_fully_sharded_data_parallel).

Each replica keeps one shard of every parameter the wrapper owns (flattened, padded to a multiple
of the replica count): those shards are the wrapper's parameters, which the optimizer steps. The
forward all-gathers the full parameters into the wrapped module; their backward reduce-scatters
the gradients (the mean over replicas, as data parallelism averages them), each replica keeping
its shard's. Wrappers nest (explicitly, or by an auto-wrap policy): an outer wrapper owns only the
parameters no inner wrapper owns, so each layer's full parameters exist only while it computes.
The collectives are graph collectives (torch_xla.core), recorded into the step's graph.

`state_dict()` holds this replica's shards (and the module's buffers); `get_shard_metadata()`
says how they make the full parameters, which `consolidate_sharded_model_checkpoints` uses to
write one full checkpoint from every replica's."""
import functools
import glob
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from .wrap import recursive_wrap

_WRAPPED = '_fsdp_wrapped_module'


class _GatherParameter(torch.autograd.Function):
    """A shard gathered into its full parameter; the gradient is reduce-scattered back."""

    @staticmethod
    def forward(ctx, shard, shape, numel, world, groups, dtype, reduce_dtype):
        ctx.world, ctx.groups, ctx.numel, ctx.shard_dtype, ctx.reduce_dtype = world, groups, numel, shard.dtype, reduce_dtype
        full = shard if world == 1 else xm.all_gather(shard, dim=0, groups=groups)
        full = full[:numel].view(shape)
        return full.to(dtype) if dtype is not None and full.is_floating_point() else full

    @staticmethod
    def backward(ctx, grad):
        flat = grad.reshape(-1).to(ctx.reduce_dtype or grad.dtype)
        flat = F.pad(flat, [0, -ctx.numel % ctx.world]) if ctx.numel % ctx.world else flat
        if ctx.world > 1:
            flat = xm.reduce_scatter(xm.REDUCE_SUM, flat, scale=1.0 / ctx.world, scatter_dim=0,
                                     shard_count=ctx.world, groups=ctx.groups)
        return flat.to(ctx.shard_dtype), None, None, None, None, None, None


class XlaFullyShardedDataParallel(nn.Module):
    """Shards `module`'s parameters over the replicas (see the module docstring).

    Options as PyTorch/XLA 2.9 spells them: `compute_dtype` (the full parameters' dtype in the
    forward and backward; the shards stay in their own), `buffer_dtype` (default compute_dtype),
    `fp32_reduce_scatter` (gradients reduced in float32), `auto_wrap_policy` / `auto_wrapper_callable` (wrap submodules first, e.g.
    `size_based_auto_wrap_policy`, or `checkpoint_module` inside), `sharding_groups` /
    `sharding_rank` / `sharding_world_size`. `flatten_parameters`, `shard_param_on_dim_0`,
    `reshard_after_forward`, the optimization-barrier and layout options are accepted: shards
    here are always one per parameter, gathered per forward."""

    def __init__(self, module: nn.Module, *, compute_dtype: Optional[torch.dtype] = None,
                 buffer_dtype: Optional[torch.dtype] = None, fp32_reduce_scatter: bool = False,
                 auto_wrap_policy: Optional[Callable] = None, auto_wrapper_callable: Optional[Callable] = None,
                 sharding_groups: Optional[List[List[int]]] = None, sharding_rank: Optional[int] = None,
                 sharding_world_size: Optional[int] = None, param_init_fn: Optional[Callable] = None,
                 **ignored: Any):
        super().__init__()
        options = dict(compute_dtype=compute_dtype, buffer_dtype=buffer_dtype, fp32_reduce_scatter=fp32_reduce_scatter,
                       sharding_groups=sharding_groups, sharding_rank=sharding_rank,
                       sharding_world_size=sharding_world_size, **ignored)
        if auto_wrap_policy is not None:
            wrapper = auto_wrapper_callable or XlaFullyShardedDataParallel
            recursive_wrap(module, auto_wrap_policy, functools.partial(wrapper, **options), ignored_modules=set(),
                           ignored_params=set(), only_wrap_children=True)
        self.world_size = sharding_world_size or xm.xrt_world_size()
        self.rank = xm.get_ordinal() if sharding_rank is None else sharding_rank
        self.sharding_groups = sharding_groups
        if sharding_groups is None and sharding_world_size is not None and sharding_world_size != xm.xrt_world_size():
            raise ValueError('sharding_world_size differs from the replica count: give sharding_groups too')
        self.compute_dtype = compute_dtype
        self.reduce_dtype = torch.float32 if fp32_reduce_scatter else None
        buffer_dtype = buffer_dtype or compute_dtype  # buffers compute with the parameters
        if buffer_dtype is not None:
            for b in module.buffers():
                if b.is_floating_point():
                    b.data = b.data.to(buffer_dtype)
        # The module lives on this replica's device (made there from the meta device when it was
        # built without memory: `param_init_fn(module)`, else each submodule's reset_parameters).
        device = xm.xla_device()
        if any(t.is_meta for t in list(module.parameters()) + list(module.buffers())):
            if param_init_fn is not None:
                param_init_fn(module)
            else:
                module.to_empty(device=device)
                for m in module.modules():
                    if callable(getattr(m, 'reset_parameters', None)) and not isinstance(m, XlaFullyShardedDataParallel):
                        m.reset_parameters()
        module.to(device)
        self.add_module(_WRAPPED, module)
        # The parameters this wrapper owns: those of `module` outside inner wrappers.
        self._owned = []  # (owner module, attribute name, name under `module`, full shape, numel)
        shards = []
        for path, owner in self._owned_modules(module):
            for name, param in list(owner._parameters.items()):
                if param is None:
                    continue
                flat = param.detach().reshape(-1)
                numel = flat.numel()
                if numel % self.world_size:
                    flat = F.pad(flat, [0, -numel % self.world_size])
                shard = nn.Parameter(flat.chunk(self.world_size)[self.rank].clone(), requires_grad=param.requires_grad)
                shards.append(shard)
                self._owned.append((owner, name, f'{path}{name}', param.shape, numel))
                del owner._parameters[name]
                setattr(owner, name, param.detach())  # until the first forward gathers it
        self.flat_params = nn.ParameterList(shards)

    @staticmethod
    def _owned_modules(module, path=''):
        yield path, module
        for name, child in module.named_children():
            if isinstance(child, XlaFullyShardedDataParallel):
                continue
            yield from XlaFullyShardedDataParallel._owned_modules(child, f'{path}{name}.')

    @property
    def module(self) -> nn.Module:
        return getattr(self, _WRAPPED)

    def forward(self, *args, **kwargs):
        for shard, (owner, name, _, shape, numel) in zip(self.flat_params, self._owned):
            full = _GatherParameter.apply(shard, shape, numel, self.world_size, self.sharding_groups,
                                          self.compute_dtype, self.reduce_dtype)
            setattr(owner, name, full)
        if self.compute_dtype is not None:
            cast = lambda t: t.to(self.compute_dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
            args = tuple(cast(a) for a in args)
            kwargs = {k: cast(v) for k, v in kwargs.items()}
        return self.module(*args, **kwargs)

    # Checkpoints -------------------------------------------------------------------------------

    def get_shard_metadata(self) -> Dict[str, Any]:
        """How this replica's state_dict makes the full model's: for every shard key, the full
        parameter's name, shape and element count, and the replica count; for every other key
        (buffers), the name it has in the unwrapped model."""
        shard_info, buffer_info = {}, {}
        for prefix, fsdp in self._wrappers():
            for k, (_, _, name, shape, numel) in enumerate(fsdp._owned):
                shard_info[f'{prefix}flat_params.{k}'] = {
                    'name': _unwrapped(f'{prefix}{_WRAPPED}.{name}'), 'shape': list(shape), 'numel': numel,
                    'world_size': fsdp.world_size, 'rank': fsdp.rank
                }
        for key in self.state_dict():
            if key not in shard_info:
                buffer_info[key] = _unwrapped(key)
        return {'shard_info': shard_info, 'buffer_info': buffer_info, 'world_size': self.world_size,
                'rank': self.rank}

    def _wrappers(self):
        for prefix, m in self.named_modules():
            if isinstance(m, XlaFullyShardedDataParallel):
                yield (f'{prefix}.' if prefix else ''), m


def _unwrapped(key: str) -> str:
    return '.'.join(part for part in key.split('.') if part != _WRAPPED)


def consolidate_sharded_state_dicts(state_dict_list: List[Dict[str, torch.Tensor]],
                                    shard_metadata_list: List[Dict[str, Any]]) -> Dict[str, torch.Tensor]:
    """The full model's state dict from every replica's (any order: each says its rank)."""
    if not state_dict_list:
        raise ValueError('no sharded state dicts to consolidate')
    by_rank = sorted(zip(state_dict_list, shard_metadata_list), key=lambda sm: sm[1]['rank'])
    world = by_rank[0][1]['world_size']
    if [m['rank'] for _, m in by_rank] != list(range(world)):
        raise ValueError(f'consolidation needs one checkpoint from each of the {world} ranks; got ranks '
                         f'{[m["rank"] for _, m in by_rank]}')
    full = {}
    first_state, first_meta = by_rank[0]
    for key, info in first_meta['shard_info'].items():
        flat = torch.cat([state[key].reshape(-1) for state, _ in by_rank])
        full[info['name']] = flat[:info['numel']].reshape(info['shape']).clone()
    for key, name in first_meta['buffer_info'].items():
        full[name] = first_state[key]
    return full


def consolidate_sharded_model_checkpoints(ckpt_prefix: str, ckpt_suffix: str = '*.pth', save_path: str = '',
                                          save_model: bool = True):
    """Reads every replica's checkpoint `{ckpt_prefix}{ckpt_suffix}` (a dict with 'model' and
    'shard_metadata') and writes the full model's as `{'model': ...}` to `save_path` (default
    `{ckpt_prefix}_consolidated.pth`). Returns (full state dict, path)."""
    paths = sorted(glob.glob(ckpt_prefix + ckpt_suffix))
    if not paths:
        raise FileNotFoundError(f'no checkpoint matches {ckpt_prefix + ckpt_suffix}')
    ckpts = [torch.load(p, map_location='cpu') for p in paths]
    full = consolidate_sharded_state_dicts([c['model'] for c in ckpts], [c['shard_metadata'] for c in ckpts])
    save_path = save_path or f'{ckpt_prefix}_consolidated.pth'
    if save_model:
        torch.save({'model': full}, save_path)
    return full, save_path
