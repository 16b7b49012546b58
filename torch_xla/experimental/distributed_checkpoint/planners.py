"""torch.distributed.checkpoint planners for state dicts holding sharded xla tensors.

A sharded tensor is saved as one chunk per distinct device piece (replicas of a piece are
written once) and loaded piece by piece: each device's piece reads the parts of the saved
chunks it overlaps, on the host, and the pieces go back to the devices together once all of
them are read. Everything else (whole tensors, other objects) takes the default planners' path.
"""
import dataclasses
import io
from collections import ChainMap
from copy import copy
from typing import Any, Dict, List, Tuple, Union

import numpy as np
import torch
from torch.distributed.checkpoint.default_planner import (create_default_global_load_plan,
                                                          create_default_global_save_plan,
                                                          create_default_local_load_plan,
                                                          create_default_local_save_plan)
from torch.distributed.checkpoint.metadata import (STATE_DICT_TYPE, ChunkStorageMetadata, Metadata,
                                                   MetadataIndex)
from torch.distributed.checkpoint.planner import (LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner,
                                                  TensorProperties, TensorWriteData, WriteItem, WriteItemType)
from torch.distributed.checkpoint.planner_helpers import create_read_items_for_chunk_list
from torch.distributed.checkpoint.utils import find_state_dict_object
from torch.utils._pytree import tree_map

import torch_xla
import torch_xla.distributed.spmd as xs
from torch_xla.distributed.spmd import XLAShard, XLAShardedTensor
from torch_xla.experimental.distributed_checkpoint._helpers import (FLATTEN_MAPPING, _CpuShards,
                                                                    _is_sharded_tensor,
                                                                    _unwrap_xla_sharded_tensor, dedup_tensors,
                                                                    flatten_state_dict, narrow_tensor_by_index,
                                                                    set_element)


def _split(state_dict: STATE_DICT_TYPE, keep_cpu_shards: bool):
    """(flat sharded entries, flat other entries with xla tensors unwrapped, mappings)."""
    flat, mappings = flatten_state_dict(state_dict)
    flat = tree_map(xs.wrap_if_sharded, flat)
    sharded = {k: v for k, v in flat.items()
               if _is_sharded_tensor(v) or (keep_cpu_shards and isinstance(v, _CpuShards))}
    others = tree_map(_unwrap_xla_sharded_tensor, {k: v for k, v in flat.items() if k not in sharded})
    return sharded, others, mappings


def _offsets(indices) -> torch.Size:
    return torch.Size(s.start for s in indices)


def _chunk(indices) -> ChunkStorageMetadata:
    return ChunkStorageMetadata(offsets=_offsets(indices), sizes=torch.Size(s.stop - s.start for s in indices))


def _piece_places(t: torch.Tensor):
    """(replica, indices) of every device's piece, without copying the pieces."""
    return torch_xla._XLAC._get_local_shard_replica_and_indices([t])[0]


def _write_item(fqn: str, piece: int, indices, size: torch.Size, properties: TensorProperties) -> WriteItem:
    return WriteItem(index=MetadataIndex(fqn, _offsets(indices), piece), type=WriteItemType.SHARD,
                     tensor_data=TensorWriteData(chunk=_chunk(indices), properties=properties, size=size))


def _xla_write_items(sharded: Dict[str, Any]) -> List[WriteItem]:
    items = []
    for fqn, v in sharded.items():
        if isinstance(v, XLAShardedTensor):
            places, size = _piece_places(v.global_tensor), v.size()
            properties = TensorProperties.create_from_tensor(v.global_tensor)
        elif isinstance(v, _CpuShards):
            places, size = [(s.replica_id, s.indices) for s in v.shards], v.global_shape
            properties = TensorProperties.create_from_tensor(v.shards[0].data)
        else:
            raise TypeError(f'{fqn}: a sharded entry is an XLAShardedTensor or _CpuShards, not {type(v).__name__}')
        # a replicated piece is written by its first replica only
        items.extend(_write_item(fqn, k, indices, size, properties)
                     for k, (replica, indices) in enumerate(places) if replica == 0)
    return items


class SPMDSavePlanner(SavePlanner):
    """A SavePlanner for state dicts with sharded xla tensors (XLAShardedTensor, or tensors
    marked with a sharding) or their host copies (_CpuShards)."""

    def __init__(self):
        self.is_coordinator = False
        self.mappings: FLATTEN_MAPPING = None
        self.sharded_state_dict: Dict[str, Union[XLAShardedTensor, _CpuShards]] = None
        self.unsharded_state_dict: Dict[str, Any] = None
        # The pieces of a sharded tensor, copied to the host at its first write and released
        # one by one as they are written.
        self._local_shards: Dict[str, List[XLAShard]] = {}

    def set_up_planner(self, state_dict: STATE_DICT_TYPE, is_coordinator: bool) -> None:
        self.is_coordinator = is_coordinator
        self.sharded_state_dict, self.unsharded_state_dict, self.mappings = _split(state_dict, True)

    def create_local_plan(self) -> SavePlan:
        plan = create_default_local_save_plan(self.unsharded_state_dict, self.is_coordinator)
        plan = dataclasses.replace(plan, planner_data=self.mappings)
        plan.items.extend(_xla_write_items(self.sharded_state_dict))
        return plan

    def create_global_plan(self, all_plans: List[SavePlan]) -> Tuple[List[SavePlan], Metadata]:
        global_plan, metadata = create_default_global_save_plan(dedup_tensors(all_plans), rewrite_index_hints=False)
        mappings = dict(ChainMap(*[p.planner_data for p in global_plan]))
        return global_plan, dataclasses.replace(metadata, planner_data=mappings)

    def finish_plan(self, new_plan: SavePlan) -> SavePlan:
        return new_plan

    def resolve_data(self, write_item: WriteItem) -> Union[torch.Tensor, io.BytesIO]:
        obj = self.lookup_object(write_item.index)
        if write_item.type == WriteItemType.BYTE_IO:
            buffer = io.BytesIO()
            torch.save(obj, buffer)
            return buffer
        return obj

    def lookup_object(self, index: MetadataIndex) -> Any:
        if index.fqn in self.unsharded_state_dict:
            return self.unsharded_state_dict[index.fqn]
        if index.fqn not in self._local_shards:
            v = self.sharded_state_dict[index.fqn]
            self._local_shards[index.fqn] = v.local_shards if isinstance(v, XLAShardedTensor) else copy(v.shards)
        shard = self._local_shards[index.fqn][index.index]
        assert shard is not None, f'WriteItem has already been processed: {index}'
        assert index.offset == _offsets(shard.indices), 'WriteItem does not correspond to the correct shard'
        self._local_shards[index.fqn][index.index] = None
        return shard.unpadded_data


class SPMDLoadPlanner(LoadPlanner):
    """A LoadPlanner that loads in place into a state dict whose tensors are already on the
    xla device, sharded as they are to be (which need not be how they were saved)."""

    def __init__(self):
        self.metadata: Metadata = None
        self.is_coordinator = False
        self.original_state_dict: STATE_DICT_TYPE = None
        self.mappings: FLATTEN_MAPPING = None
        self.sharded_state_dict: Dict[str, XLAShardedTensor] = None
        self.unsharded_state_dict: Dict[str, Any] = None
        # A sharded tensor's pieces on the host while they are read into, and how many of their
        # elements are still to be read.
        self._local_shards: Dict[str, List[XLAShard]] = {}
        self._pending_elements: Dict[str, int] = {}

    def set_up_planner(self, state_dict: STATE_DICT_TYPE, metadata: Metadata = None,
                       is_coordinator: bool = False) -> None:
        self.metadata = metadata
        self.is_coordinator = is_coordinator
        self.original_state_dict = state_dict
        self.sharded_state_dict, self.unsharded_state_dict, self.mappings = _split(state_dict, False)

    def create_local_plan(self) -> LoadPlan:
        plan = create_default_local_load_plan(self.unsharded_state_dict, self.metadata)
        for fqn, t in self.sharded_state_dict.items():
            chunks = [_chunk(indices) for _, indices in _piece_places(t.global_tensor)]
            plan.items.extend(create_read_items_for_chunk_list(fqn, self.metadata.state_dict_metadata[fqn], chunks))
        return plan

    def create_global_plan(self, global_plan: List[LoadPlan]) -> List[LoadPlan]:
        return create_default_global_load_plan(global_plan)

    def finish_plan(self, central_plan: LoadPlan) -> LoadPlan:
        return central_plan

    def load_bytes(self, read_item: ReadItem, value: io.BytesIO) -> None:
        set_element(self.original_state_dict, self.mappings[read_item.dest_index.fqn], torch.load(value))

    def resolve_tensor(self, read_item: ReadItem) -> torch.Tensor:
        # The storage layer copies into what this returns: the read item's part of the piece.
        tensor = self.lookup_tensor(read_item.dest_index)
        return narrow_tensor_by_index(tensor, read_item.dest_offsets, read_item.lengths)

    def lookup_tensor(self, index: MetadataIndex) -> torch.Tensor:
        if index.fqn in self.unsharded_state_dict:
            return find_state_dict_object(self.unsharded_state_dict, index)
        if index.fqn not in self._local_shards:
            shards = self.sharded_state_dict[index.fqn].local_shards
            self._local_shards[index.fqn] = shards
            self._pending_elements[index.fqn] = sum(s.unpadded_data.numel() for s in shards)
        shard = self._local_shards[index.fqn][index.index]
        assert index.offset == _offsets(shard.indices), 'ReadItem does not correspond to the correct shard'
        return shard.data  # padded: resolve_tensor narrows it to the read item

    def commit_tensor(self, read_item: ReadItem, tensor: torch.Tensor) -> None:
        fqn = read_item.dest_index.fqn
        if fqn not in self.sharded_state_dict:
            return
        self._pending_elements[fqn] -= int(np.prod(read_item.lengths))
        assert self._pending_elements[fqn] >= 0, f'Too many writes for tensor {fqn}'
        if self._pending_elements[fqn] == 0:
            self.sharded_state_dict[fqn].load_local_shards_(self._local_shards.pop(fqn))
