"""Meshes, partition specs and the shardings they make (PyTorch/XLA 2.9's `xs` API).

A mesh arranges the job's devices in a logical grid with named axes; a partition spec says, per
tensor dimension, which mesh axis (or axes, or None) it is split over. The sharding that results
is XLA's (`{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}`): the compiler propagates it through
the program and partitions the program over the devices."""
import ast
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import IntEnum
import functools
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

import torch_xla
import torch_xla.runtime as xr
from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor

PartitionSpec = Tuple[Union[Tuple[Union[int, str], ...], int, str, None], ...]


class ShardingType(IntEnum):
    # xla::OpSharding::Type, as PyTorch/XLA numbers it
    REPLICATED = 0
    MAXIMAL = 1
    TUPLE = 2
    TILED = 3
    MANUAL = 4
    PARTIAL = 5
    UNKNOWN = 6


class Mesh:
    """The devices `device_ids` arranged as `mesh_shape` (row-major), with optional axis names.

    Every device of the job must be in the mesh once."""

    def __init__(self, device_ids, mesh_shape: Tuple[int, ...], axis_names: Optional[Tuple[str, ...]] = None):
        device_ids = np.asarray(device_ids)
        mesh_shape = tuple(mesh_shape)
        n = xr.global_runtime_device_count()
        assert n > 0, 'This requires XLA supported device(s).'
        assert len(device_ids) == n, \
            f'Number of device IDs ({len(device_ids)}) must match the global number of devices ({n})'
        if axis_names is not None:
            assert len(mesh_shape) == len(axis_names), \
                f'Number of axis names ({len(axis_names)}) must match mesh dimensions ({len(mesh_shape)})'
            assert len(set(axis_names)) == len(axis_names), f'Axis names must be unique, got: {axis_names}'
        expected = int(np.prod(mesh_shape))
        assert len(device_ids) == expected, \
            f'Number of device IDs ({len(device_ids)}) must match mesh size ({expected})'
        assert len(device_ids) == len(np.unique(device_ids)), f'Device IDs must be unique, got: {device_ids}'
        assert all(0 <= d < expected for d in device_ids), \
            f'Device IDs must be less than mesh size ({expected}), got: {device_ids}'
        self.device_ids = device_ids
        self.mesh_shape = mesh_shape
        self.axis_names = tuple(axis_names) if axis_names is not None else None

    def size(self):
        return int(np.prod(self.mesh_shape))

    def shape(self):
        names = self.axis_names if self.axis_names is not None else range(len(self.mesh_shape))
        return OrderedDict(zip(names, self.mesh_shape))

    def get_logical_mesh(self):
        return self.device_ids.reshape(self.mesh_shape)

    def get_axis_name_idx(self, name: str) -> Optional[int]:
        if self.axis_names is None or name not in self.axis_names:
            return None
        return self.axis_names.index(name)

    def __str__(self):
        return (f"{{'device_ids': {self.device_ids.tolist()}, 'mesh_shape': {self.mesh_shape}, "
                f"'axis_names': {self.axis_names}}}")

    @classmethod
    def from_str(cls, text: str) -> Optional['Mesh']:
        """The mesh `str(mesh)` printed; None for text that is not one."""
        try:
            d = ast.literal_eval(text)
            return cls(d['device_ids'], tuple(d['mesh_shape']), d['axis_names'])
        except (ValueError, SyntaxError, KeyError, TypeError):
            return None

    def _translate(self, partition_spec: PartitionSpec):
        """Mesh axis names to indices; checks each axis is used once and exists."""
        out = []
        for p in partition_spec:
            if isinstance(p, tuple):
                assert not any(isinstance(x, tuple) for x in p), 'Partition spec cannot contain nested tuples'
                out.append(self._translate(p))
            elif p is None or isinstance(p, int):
                out.append(p)
            elif isinstance(p, str):
                idx = self.get_axis_name_idx(p)
                if idx is None:
                    raise ValueError(f'Axis name {p} is not defined in the given mesh')
                out.append(idx)
            else:
                raise ValueError(f'Spec type {type(p)} is not supported in partition spec')
        return tuple(out)

    def _op_sharding_args(self, partition_spec: PartitionSpec):
        spec = self._translate(partition_spec)
        used = [a for p in spec if p is not None for a in (p if isinstance(p, tuple) else (p,))]
        assert all(0 <= a < len(self.mesh_shape) for a in used), \
            f'partition_spec ({partition_spec}) contains out of bound index into mesh_shape.'
        assert len(used) == len(set(used)), \
            f'Each device mesh dimension should appear at most once in partition_spec {partition_spec}.'
        if self.size() == 1:
            return [[0]], [], [], ShardingType.MAXIMAL
        if not used:
            return [], [], [], ShardingType.REPLICATED
        missing = [a for a in range(len(self.mesh_shape)) if a not in used]
        grid = self.get_logical_mesh().transpose(used + missing)
        tile_dims = []
        for p in spec:
            if p is None:
                tile_dims.append(1)
            else:
                axes = p if isinstance(p, tuple) else (p,)
                tile_dims.append(int(np.prod([self.mesh_shape[a] for a in axes])))
        replicas = int(np.prod([self.mesh_shape[a] for a in missing])) if missing else 1
        if replicas == 1:
            return grid.reshape(tile_dims).tolist(), [], [], ShardingType.TILED
        tiles = int(np.prod(tile_dims))
        groups = grid.reshape(tiles, replicas).tolist()
        return [], np.arange(tiles).reshape(tile_dims).tolist(), groups, ShardingType.PARTIAL

    @functools.lru_cache(maxsize=None)
    def get_op_sharding(self, partition_spec: PartitionSpec):
        """The sharding `partition_spec` gives a tensor of its rank over this mesh."""
        if len(partition_spec) == 0:
            return torch_xla._XLAC.OpSharding([], [], [], ShardingType.REPLICATED)
        tile, groups, members, kind = self._op_sharding_args(partition_spec)
        return torch_xla._XLAC.OpSharding(tile, groups, members, int(kind))


class HybridMesh(Mesh):
    """A mesh over hosts (dcn_mesh_shape) of meshes within a host (ici_mesh_shape), axis by axis
    the product of the two. On CPU devices the devices of one process are a host's."""

    def __init__(self, *, ici_mesh_shape: Tuple[int, ...], dcn_mesh_shape: Optional[Tuple[int, ...]] = None,
                 axis_names: Optional[Tuple[str, ...]] = None):
        if dcn_mesh_shape is None:
            dcn_mesh_shape = tuple([1] * len(ici_mesh_shape))
        assert len(ici_mesh_shape) == len(dcn_mesh_shape), \
            'ici_mesh_shape and dcn_mesh_shape must have the same number of dimensions'
        mesh_shape = tuple(i * d for i, d in zip(ici_mesh_shape, dcn_mesh_shape))
        n = xr.global_runtime_device_count()
        hosts = int(np.prod(dcn_mesh_shape))
        per_host = n // hosts
        blocks = np.arange(n).reshape((hosts, ) + tuple(ici_mesh_shape)) if hosts * per_host == n else None
        assert blocks is not None and per_host == int(np.prod(ici_mesh_shape)), \
            f'ici_mesh_shape {ici_mesh_shape} x dcn_mesh_shape {dcn_mesh_shape} does not cover {n} devices'
        host_grid = np.arange(hosts).reshape(dcn_mesh_shape)
        mesh = np.block(np.vectorize(lambda h: blocks[h], otypes=[object])(host_grid).tolist()) \
            if hosts > 1 else blocks[0]
        super().__init__(np.asarray(mesh).reshape(-1), mesh_shape, axis_names)


_global_mesh: Optional[Mesh] = None


def set_global_mesh(mesh: Mesh):
    global _global_mesh
    _global_mesh = mesh


def get_global_mesh() -> Optional[Mesh]:
    return _global_mesh


def get_1d_mesh(axis_name: Optional[str] = None) -> Mesh:
    """Every device in one axis."""
    n = xr.global_runtime_device_count()
    return Mesh(np.arange(n), (n, ), (axis_name, ) if axis_name is not None else None)


def unwrap_sharded_tensor(t):
    return t.global_tensor if isinstance(t, XLAShardedTensor) else t


def wrap_as_sharded_tensor(t, mesh_shape=None, partition_spec=None) -> XLAShardedTensor:
    """`t` as an XLAShardedTensor; the mesh shape and partition spec given replace the ones
    an XLAShardedTensor had (its DTensor spec is made anew)."""
    if not isinstance(t, XLAShardedTensor):
        return XLAShardedTensor(t, mesh_shape=mesh_shape, partition_spec=partition_spec)
    if mesh_shape is not None:
        t.mesh_shape = mesh_shape
    if partition_spec is not None:
        t.partition_spec = partition_spec
    if mesh_shape is not None or partition_spec is not None:
        t.invalidate_spec_cache()
    return t


def wrap_if_sharded(x):
    """`x` as an XLAShardedTensor if it is an xla tensor with a sharding, else itself."""
    if (isinstance(x, torch.Tensor) and not isinstance(x, XLAShardedTensor) and x.device.type == 'xla' and
            torch_xla._XLAC._get_xla_sharding_type(x) is not None):
        return XLAShardedTensor(x)
    return x


def _check_spec(t: torch.Tensor, mesh: Mesh, partition_spec: PartitionSpec):
    if t.device.type != 'xla':
        raise ValueError(f'mark_sharding: the tensor is on {t.device}; only xla tensors are sharded '
                         "(move it with .to('xla') first)")
    assert len(partition_spec) == t.dim(), \
        f'Partition spec length ({len(partition_spec)}) should be equal to the input rank ({t.dim()}).'
    n = xr.global_runtime_device_count()
    assert mesh.size() <= n, f'The mesh ({mesh.size()} devices) is larger than the device count ({n}).'


def mark_sharding(t: Union[torch.Tensor, XLAShardedTensor], mesh: Mesh,
                  partition_spec: PartitionSpec) -> XLAShardedTensor:
    """Lays `t` over the mesh's devices as `partition_spec` says: dimension d is split over the
    mesh axis (or axes) partition_spec[d], or whole where it is None. Data on the device is split
    now; a value still to be computed is computed so. Returns `t` as an XLAShardedTensor."""
    if not xr.is_spmd():
        raise RuntimeError('mark_sharding needs SPMD: call torch_xla.runtime.use_spmd() first')
    partition_spec = tuple(partition_spec)
    tensor = unwrap_sharded_tensor(t)
    _check_spec(tensor, mesh, partition_spec)
    torch_xla._XLAC._xla_mark_sharding(tensor, mesh.get_op_sharding(partition_spec))
    return wrap_as_sharded_tensor(t, mesh_shape=mesh.mesh_shape, partition_spec=partition_spec)


def with_sharding_constraint(t, mesh: Mesh, partition_spec: PartitionSpec):
    """The value of `t` in this layout at this point of the program (as mark_sharding)."""
    return mark_sharding(t, mesh, partition_spec)


def annotate_custom_sharding(t, mesh: Mesh, partition_spec: PartitionSpec) -> XLAShardedTensor:
    """Annotates `t`'s value with a sharding without changing the tensor's own sharding."""
    tensor = unwrap_sharded_tensor(t)
    _check_spec(tensor, mesh, tuple(partition_spec))
    torch_xla._XLAC._xla_annotate_custom_sharding(tensor, mesh.get_op_sharding(tuple(partition_spec)))
    return wrap_as_sharded_tensor(t)


def clear_sharding(t: Union[torch.Tensor, XLAShardedTensor]) -> torch.Tensor:
    """Forgets `t`'s sharding (its data is gathered whole); returns the plain tensor."""
    tensor = unwrap_sharded_tensor(t)
    torch_xla._XLAC._xla_clear_sharding(tensor)
    return tensor


# Sharding as ops that tracing (AOTAutograd, dynamo) records into its graphs: their arguments
# are what a graph can hold (ints, strings), the mesh and partition spec spelled as text. Neither
# declares a mutation (PyTorch/XLA's schemas): functionalization hands them the tensor's value.
_xla_library = torch.library.Library('xla', 'FRAGMENT')
_xla_library.define('aot_mark_sharding(Tensor t, str mesh, str partition_spec) -> Tensor')
_xla_library.define('dynamo_mark_sharding(Tensor input, int[] device_ids, int[] mesh_shape, str axis_names, '
                    'str partition_spec) -> ()')


def _aot_mark_sharding_impl(t, mesh, partition_spec):
    """A copy of `t` laid out over `mesh` (Mesh.__str__) as `partition_spec` (its repr) say."""
    return mark_sharding(t.clone(), Mesh.from_str(mesh), ast.literal_eval(partition_spec)).global_tensor


def _dynamo_mark_sharding_impl(t, device_ids, mesh_shape, axis_names, partition_spec):
    """mark_sharding(t, Mesh(device_ids, mesh_shape, axis_names), partition_spec), the last two
    given as the text of their Python values."""
    mark_sharding(t, Mesh(device_ids, tuple(mesh_shape), ast.literal_eval(axis_names)),
                  ast.literal_eval(partition_spec))


_xla_library.impl('aot_mark_sharding', _aot_mark_sharding_impl, 'CompositeExplicitAutograd')
_xla_library.impl('dynamo_mark_sharding', _dynamo_mark_sharding_impl, 'CompositeExplicitAutograd')
torch.library.register_fake('xla::aot_mark_sharding', lambda t, mesh, partition_spec: torch.empty_like(t),
                            lib=_xla_library)
torch.library.register_fake('xla::dynamo_mark_sharding', lambda *args: None, lib=_xla_library)


def _aot_mark_sharding(t, mesh: str, partition_spec: str):
    return torch.ops.xla.aot_mark_sharding(t, mesh, partition_spec)


class MarkShardingFunction(torch.autograd.Function):
    """mark_sharding of a copy in the forward pass and of the gradient in the backward pass
    (the input keeps its layout); traceable by AOTAutograd."""

    @staticmethod
    def forward(ctx, t, mesh, partition_spec):
        ctx.mesh, ctx.partition_spec = mesh, partition_spec
        return _aot_mark_sharding(t, str(mesh), str(tuple(partition_spec)))

    @staticmethod
    def backward(ctx, grad):
        return _aot_mark_sharding(grad, str(ctx.mesh), str(tuple(ctx.partition_spec))), None, None


def mark_sharding_with_gradients(t, mesh: Mesh, partition_spec: PartitionSpec):
    """As mark_sharding, and the gradient flowing back through `t` gets the same sharding."""
    return MarkShardingFunction.apply(unwrap_sharded_tensor(t), mesh, tuple(partition_spec))


class XLAPatchedLinear(torch.autograd.Function):
    """nn.Linear's forward and backward as einsums over the last dimension, which keep leading
    dimensions whole (a sharded batch or sequence stays sharded through the gradient)."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        out = torch.einsum('...n,mn->...m', input, weight)
        return out + bias if bias is not None else out

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = torch.einsum('...m,mn->...n', grad_output, weight)
        if ctx.needs_input_grad[1]:
            grad_weight = torch.einsum('...m,...n->mn', grad_output, input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = torch.einsum('...m->m', grad_output)
        return grad_input, grad_weight, grad_bias


def xla_patched_nn_linear_forward(m, input):
    return XLAPatchedLinear.apply(input, m.weight, m.bias)


def apply_backward_optimization_barrier(m: torch.nn.Module):
    """A backward hook on `m` that puts an optimization barrier on its gradients
    (xm.optimization_barrier_), as PyTorch/XLA's FSDPv2 does to bound what the compiler fuses
    across layers."""
    import torch_xla.core.xla_model as xm

    def barrier(module, grad_input, grad_output):
        grads = [p.grad for p in module.parameters() if p.grad is not None]
        xm.optimization_barrier_(grads + [g for g in grad_input if isinstance(g, torch.Tensor)])

    m.register_full_backward_hook(barrier)


def _mark_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor]) -> XLAShardedTensor:
    """Marks a value computed inside a manual region as manual (each device's own piece); what
    disable_manual_sharding does before leaving the region."""
    manual = torch_xla._XLAC.OpSharding([], [], [], ShardingType.MANUAL)
    torch_xla._XLAC._mark_manual_sharding(unwrap_sharded_tensor(t), manual)
    return wrap_as_sharded_tensor(t)


def _mesh_or_global(mesh: Optional[Mesh], what: str) -> Mesh:
    mesh = get_global_mesh() if mesh is None else mesh
    if mesh is None:
        raise ValueError(f'{what} needs a mesh: pass mesh= or set_global_mesh() first')
    return mesh


def enable_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor], partition_spec: PartitionSpec, *,
                           mesh: Optional[Mesh] = None) -> XLAShardedTensor:
    """Starts a manual region: `t` is sharded over `mesh` (the global mesh by default) as
    `partition_spec` says, and the result is each device's piece, which the ops that follow
    work on device by device (the compiler does not partition them). End the region with
    disable_manual_sharding before the values are read."""
    mesh = _mesh_or_global(mesh, 'enable_manual_sharding')
    t = mark_sharding(unwrap_sharded_tensor(t), mesh, partition_spec)
    piece = torch_xla._XLAC._spmd_full_to_shard_shape(unwrap_sharded_tensor(t))
    return wrap_as_sharded_tensor(piece, mesh_shape=mesh.mesh_shape, partition_spec=tuple(partition_spec))


def disable_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor], partition_spec: PartitionSpec,
                            full_shape: torch.Size, *, mesh: Optional[Mesh] = None) -> XLAShardedTensor:
    """Ends a manual region: the devices' pieces `t` become the whole tensor of `full_shape`,
    laid out over `mesh` as `partition_spec` says."""
    mesh = _mesh_or_global(mesh, 'disable_manual_sharding')
    t = _mark_manual_sharding(unwrap_sharded_tensor(t))
    whole = torch_xla._XLAC._spmd_shard_to_full_shape(unwrap_sharded_tensor(t),
                                                      mesh.get_op_sharding(tuple(partition_spec)),
                                                      list(full_shape), t.dtype)
    return wrap_as_sharded_tensor(whole, mesh_shape=mesh.mesh_shape, partition_spec=tuple(partition_spec))


@dataclass
class ShardingSpec:
    """A mesh and partition spec to shard data with later (MpDeviceLoader's input_sharding)."""
    mesh: Mesh
    partition_spec: PartitionSpec
    minibatch: Optional[bool] = False

    def apply(self, t: torch.Tensor):
        mark_sharding(t, self.mesh, self.partition_spec)

    def can_apply(self, t: torch.Tensor) -> bool:
        return len(t.shape) == len(self.partition_spec)
