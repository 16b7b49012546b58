"""XLAShardedTensor: an xla tensor seen with its sharding, and its pieces on the host."""
from dataclasses import dataclass
from typing import List, Optional, Union

import torch
from torch.utils._pytree import tree_map

import torch_xla


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

    @property
    def unpadded_data(self) -> torch.Tensor:
        """The piece without its padding."""
        if self.indices == Ellipsis:
            return self.data
        return self.data[tuple(slice(0, s.stop - s.start) for s in self.indices)]


class XLAShardedTensor(torch.Tensor):
    """A tensor on the xla device together with the sharding that lays it over the devices.

    Ops on it run on `global_tensor` and give back XLAShardedTensors."""
    __slots__ = ['global_tensor', 'mesh_shape', 'partition_spec']

    @staticmethod
    def __new__(cls, elem: torch.Tensor, mesh_shape=None, partition_spec=None, *args, **kwargs):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=elem.device,
            requires_grad=kwargs.get('requires_grad', False))
        r.global_tensor = elem.detach() if r.requires_grad else elem
        r.mesh_shape = mesh_shape
        r.partition_spec = partition_spec
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

    @property
    def sharding_spec(self):
        return torch_xla._XLAC._get_xla_sharding_spec(self.global_tensor)

    @property
    def sharding_type(self):
        from torch_xla.distributed.spmd.xla_sharding import ShardingType
        t = torch_xla._XLAC._get_xla_sharding_type(self.global_tensor)
        return ShardingType(t) if t is not None else None

    def __repr__(self):
        return f"XLAShardedTensor({self.global_tensor})"

    __str__ = __repr__

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):

        def unwrap(e):
            return e.global_tensor if isinstance(e, XLAShardedTensor) else e

        def wrap(e):
            return XLAShardedTensor(e) if isinstance(e, torch.Tensor) and not isinstance(e, XLAShardedTensor) else e

        return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

    # Ops reach __torch_dispatch__, which wraps their results with their global tensors.
    __torch_function__ = torch._C._disabled_torch_function_impl
