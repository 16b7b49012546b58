"""State-dict plumbing the planners share: flattening nested state dicts, telling sharded
tensors apart, and host copies of every device's piece (`_CpuShards`)."""
import dataclasses
from typing import Any, Dict, List, Tuple

import torch
from torch.distributed.checkpoint._dedup_tensors import dedup_tensors  # noqa: F401 (the planners')
from torch.distributed.checkpoint._traverse import set_element, traverse_state_dict  # noqa: F401
from torch.distributed.checkpoint.metadata import STATE_DICT_TYPE
from torch.distributed._shard._utils import narrow_tensor_by_index  # noqa: F401
from torch.utils._pytree import tree_flatten, tree_unflatten

import torch_xla
import torch_xla.distributed.spmd as xs
from torch_xla.distributed.spmd import ShardingType, XLAShardedTensor

OBJ_PATH = Tuple[Any, ...]
FLATTEN_MAPPING = Dict[str, OBJ_PATH]


@dataclasses.dataclass
class _CpuShards:
    """Every device's piece of a sharded tensor, copied to the host (what an asynchronous
    checkpoint writes while training goes on)."""
    shards: List[xs.XLAShard]
    global_shape: torch.Size


def _is_sharded_tensor(x: Any) -> bool:
    """Whether `x` is an XLAShardedTensor whose data is split over the devices."""
    return isinstance(x, XLAShardedTensor) and x.sharding_type not in (None, ShardingType.REPLICATED)


def _unwrap_xla_sharded_tensor(x: Any) -> Any:
    return x.global_tensor if isinstance(x, XLAShardedTensor) else x


def flatten_state_dict(state_dict: STATE_DICT_TYPE) -> Tuple[STATE_DICT_TYPE, FLATTEN_MAPPING]:
    """A nested state dict as one level, keys joined by '.', and each key's path back into the
    original. Tensors and _CpuShards are leaves (a list of them is walked into)."""
    flat: STATE_DICT_TYPE = {}
    mappings: FLATTEN_MAPPING = {}

    def visit(path: OBJ_PATH, value: Any) -> None:
        key = '.'.join(map(str, path))
        if key in flat:
            raise ValueError(f'duplicated flatten key {key}')
        flat[key] = value
        mappings[key] = path

    traverse_state_dict(state_dict, visit, lambda v: isinstance(v, (torch.Tensor, _CpuShards)))
    return flat, mappings


def _cpu_shards_from_tensors(tensors: List[torch.Tensor]) -> List[_CpuShards]:
    pieces = torch_xla._XLAC._get_local_shards(tensors)
    places = torch_xla._XLAC._get_local_shard_replica_and_indices(tensors)
    return [
        _CpuShards(shards=[xs.XLAShard(data, indices, device, replica)
                           for (data, device), (replica, indices) in zip(p, q)],
                   global_shape=t.shape) for t, p, q in zip(tensors, pieces, places)
    ]


def _sharded_cpu_state_dict(state_dict: STATE_DICT_TYPE) -> STATE_DICT_TYPE:
    """`state_dict` on the host: sharded xla tensors become _CpuShards (each device's piece),
    other tensors host tensors; all copied in one transfer."""
    flat, spec = tree_flatten(state_dict)
    flat = [xs.wrap_if_sharded(x) for x in flat]
    sharded = iter(_cpu_shards_from_tensors([x.global_tensor for x in flat if _is_sharded_tensor(x)]))
    whole = iter(torch_xla._XLAC._xla_get_cpu_tensors(
        [_unwrap_xla_sharded_tensor(x) for x in flat if isinstance(x, torch.Tensor) and not _is_sharded_tensor(x)]))

    def to_cpu(x):
        if _is_sharded_tensor(x):
            return next(sharded)
        return next(whole) if isinstance(x, torch.Tensor) else x

    return tree_unflatten([to_cpu(x) for x in flat], spec)
