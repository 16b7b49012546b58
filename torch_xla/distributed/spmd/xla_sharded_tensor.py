"""XLAShardedTensor: an xla tensor seen with its sharding, and its pieces on the host.

It is a DTensor (torch.distributed.tensor), so code written against DTensor's view of a
distributed tensor (`placements`, `device_mesh`, `_spec`, `redistribute`) works on it; unlike a
DTensor it holds the global tensor, not a local piece: the compiler partitions the program."""
from dataclasses import dataclass
from typing import List, Union

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
from torch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard
from torch.utils._pytree import tree_map

import torch_xla
import torch_xla.runtime as xr


@dataclass
class XLAShard:
    """One device's piece of a sharded tensor, on the host.

    `data` is the piece as the device holds it (padded with zeros where a dimension does not
    divide); `indices` the piece's place in the whole tensor (a list of slices, or Ellipsis for
    a replicated tensor); `replica_id` which copy of that piece it is."""
    data: torch.Tensor
    indices: Union[type(Ellipsis), List[slice]]
    shard_device: str
    replica_id: int

    def _unpadded_index(self):
        if self.indices == Ellipsis:
            return Ellipsis
        return tuple(slice(0, s.stop - s.start) for s in self.indices)

    @property
    def unpadded_data(self) -> torch.Tensor:
        """The piece without its padding."""
        return self.data[self._unpadded_index()]

    @unpadded_data.setter
    def unpadded_data(self, t: torch.Tensor):
        self.data[self._unpadded_index()] = t


_NO_SPEC = ("Placements not available: XLAShardedTensor requires mesh_shape and partition_spec to be "
            "set. Use mark_sharding() to properly initialize sharding information.")


def placements_of(mesh_ndim: int, partition_spec) -> tuple:
    """DTensor placements (one per mesh axis) of a partition spec (one entry per tensor dim)."""
    placements = []
    for axis in range(mesh_ndim):
        dims = [d for d, p in enumerate(partition_spec)
                if p == axis or (isinstance(p, tuple) and axis in p)]
        placements.append(Shard(dims[0]) if dims else Replicate())
    return tuple(placements)


def partition_spec_of(rank: int, placements) -> tuple:
    """The partition spec (one entry per tensor dim) of DTensor placements (one per mesh axis)."""
    spec = [None] * rank
    for axis, p in enumerate(placements):
        if isinstance(p, Partial):
            raise NotImplementedError('Partial placement is not supported on XLA: use Shard or Replicate '
                                      '(a partial sum is an internal state of a partitioned program)')
        if isinstance(p, Shard):
            if not -rank <= p.dim < rank:
                raise IndexError(f'Shard dimension {p.dim} is out of bounds for a tensor with {rank} dimensions')
            dim = p.dim % rank
            # a dimension sharded over several mesh axes is split over their product, in order
            prior = spec[dim]
            spec[dim] = axis if prior is None else (prior if isinstance(prior, tuple) else (prior, )) + (axis, )
        elif not isinstance(p, Replicate):
            raise ValueError(f'Unsupported placement type: {type(p).__name__}')
    return tuple(spec)


class XLAShardedTensor(DTensor):
    """A tensor on the xla device together with the sharding that lays it over the devices.

    `global_tensor` is the whole (logical) tensor; `mesh_shape` and `partition_spec` how it was
    sharded, when it was sharded through this API (results of ops carry neither: their
    sharding is the compiler's to choose). Ops on it run on `global_tensor` and give back
    XLAShardedTensors."""
    __slots__ = ['global_tensor', 'mesh_shape', 'partition_spec', '_cached_spec']

    @staticmethod
    def __new__(cls, elem: torch.Tensor, mesh_shape=None, partition_spec=None, *args, **kwargs):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=elem.device,
            requires_grad=kwargs.get('requires_grad', False))
        r.global_tensor = elem.detach() if r.requires_grad else elem
        inherited = isinstance(elem, XLAShardedTensor)
        r.mesh_shape = mesh_shape or (elem.mesh_shape if inherited else None)
        r.partition_spec = partition_spec or (elem.partition_spec if inherited else None)
        r._cached_spec = None
        return r

    @property
    def local_shards(self) -> List[XLAShard]:
        """Every device's piece, copied to the host."""
        shards, = torch_xla._XLAC._get_local_shards([self.global_tensor])
        places, = torch_xla._XLAC._get_local_shard_replica_and_indices([self.global_tensor])
        return [XLAShard(data, indices, device, replica)
                for (data, device), (replica, indices) in zip(shards, places)]

    def load_local_shards_(self, shards: List[XLAShard]):
        """Replaces every device's piece with `shards` (each of the device's piece shape)."""
        torch_xla._XLAC._load_local_shards(self.global_tensor, [s.data for s in shards],
                                           [s.shard_device for s in shards])
        self.invalidate_spec_cache()

    @property
    def sharding_spec(self):
        return torch_xla._XLAC._get_xla_sharding_spec(self.global_tensor)

    @property
    def sharding_type(self):
        from torch_xla.distributed.spmd.xla_sharding import ShardingType
        t = torch_xla._XLAC._get_xla_sharding_type(self.global_tensor)
        return ShardingType(t) if t is not None else None

    # --- DTensor's view -------------------------------------------------------------------
    @property
    def _spec(self) -> DTensorSpec:
        """The DTensorSpec (mesh over all devices, placements, metadata) of this sharding."""
        if self._cached_spec is not None:
            return self._cached_spec
        if self.mesh_shape is None or self.partition_spec is None:
            raise ValueError(
                'mesh_shape and partition_spec must be set to make a DTensorSpec; a tensor that came out '
                'of an op carries neither (its sharding is the compiler\'s). Use wrap_as_sharded_tensor() '
                'to set them first.')
        n = xr.global_runtime_device_count()
        mesh = DeviceMesh('xla', torch.arange(n).reshape(self.mesh_shape))
        t = self.global_tensor
        self._cached_spec = DTensorSpec(
            mesh=mesh, placements=placements_of(len(self.mesh_shape), self.partition_spec),
            tensor_meta=TensorMeta(shape=t.shape, stride=t.stride(), dtype=t.dtype))
        return self._cached_spec

    @property
    def placements(self) -> tuple:
        try:
            return self._spec.placements
        except ValueError:
            raise ValueError(_NO_SPEC) from None

    def invalidate_spec_cache(self):
        """Forgets the DTensorSpec made from mesh_shape and partition_spec (they changed)."""
        self._cached_spec = None

    def redistribute(self, device_mesh, placements, *, async_op: bool = False):
        """This tensor laid out on `device_mesh` (an xs.Mesh) as `placements` say. The layout
        change happens in the program (an annotation the compiler reshards at); with async_op
        the result is a new tensor and this one keeps its layout."""
        if len(placements) != len(device_mesh.mesh_shape):
            raise ValueError(f'Number of placements ({len(placements)}) must match mesh dimensions '
                             f'({len(device_mesh.mesh_shape)})')
        spec = partition_spec_of(self.global_tensor.dim(), placements)
        result = self.global_tensor.clone() if async_op else self.global_tensor
        torch_xla._XLAC._xla_annotate_custom_sharding(result, device_mesh.get_op_sharding(spec))
        return XLAShardedTensor(result, mesh_shape=device_mesh.mesh_shape, partition_spec=spec)

    def to_local(self, *, grad_placements=None):
        raise NotImplementedError('XLAShardedTensor.to_local: an XLA program sees the global tensor; '
                                  'use .global_tensor, or .local_shards for the pieces on each device')

    def full_tensor(self, *, grad_placements=None):
        return self.global_tensor

    def __repr__(self):
        return f"XLAShardedTensor({self.global_tensor})"

    __str__ = __repr__

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):

        def unwrap(e):
            return e.global_tensor if isinstance(e, XLAShardedTensor) else e

        def wrap(e):
            return XLAShardedTensor(e) if isinstance(e, torch.Tensor) and not isinstance(e, XLAShardedTensor) else e

        # A subclass's __torch_dispatch__ runs with the dispatch keys above Python excluded,
        # functionalization among them; xla tensors are functional, so the op on the global
        # tensors runs with it again (else its results are bare and their views fail).
        exclude = torch._C._dispatch_tls_local_exclude_set().remove(torch._C.DispatchKey.Functionalize)
        with torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), exclude):
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(wrap, out)

    # Ops reach __torch_dispatch__, which wraps their results with their global tensors.
    __torch_function__ = torch._C._disabled_torch_function_impl
