"""CheckpointManager: per-step checkpoints of a (sharded) state dict under one directory,
taken every `save_interval` steps, synchronously or in the background, and at the first step
after a preemption notice (SIGTERM)."""
import logging
import os
import pickle
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Deque, List, Optional, Union

import fsspec
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
from fsspec.core import url_to_fs
from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader, FsspecWriter
from torch.distributed.checkpoint.metadata import STATE_DICT_TYPE

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from ._helpers import _sharded_cpu_state_dict
from .planners import SPMDLoadPlanner, SPMDSavePlanner

# Written into each step's directory once its checkpoint is complete: a directory without it is
# not a checkpoint (a save that died half way).
_MANAGER_METADATA_FILE = '.manager_metadata'


@dataclass
class _CheckpointMetadata:
    step: int
    ts: datetime


class CheckpointManager:
    """Checkpoints under `path/<step>/` (any fsspec path), through torch.distributed.checkpoint
    with the SPMD planners.

    save(step, sd) / save_async(step, sd) take a checkpoint when `should_save(step)`: the step is
    a multiple of `save_interval`, or (with chkpt_on_preemption) a preemption was noticed.
    save_async copies the state to the host first and writes it on a background thread, at most
    `max_pending_async` at a time. `max_to_keep` > 0 keeps only the newest checkpoints (by the
    time they were taken, across runs). restore(step, sd) loads into `sd` in place.
    A torch.distributed process group must be initialized (every process checkpoints its part)."""

    def __init__(self, path: str, save_interval: int, max_to_keep: Optional[int] = 0,
                 max_pending_async: Optional[int] = 1, num_of_threads: Optional[int] = 1,
                 process_group: dist.ProcessGroup = None, chkpt_on_preemption: bool = True):
        assert dist.is_initialized(), 'A process group is required.'
        assert save_interval > 0, 'save_interval must be positive'
        assert max_pending_async > 0, 'max_pending_async must be positive'
        assert max_to_keep >= 0, 'max_to_keep must be non-negative'
        self.base_path = os.path.join(path, '')
        self.save_interval = save_interval
        self.max_to_keep = max_to_keep
        self.num_of_threads = num_of_threads
        self.chkpt_on_preemption = chkpt_on_preemption
        self.pg = process_group or dist.new_group()
        self._async_worker_pool = ThreadPoolExecutor(max_workers=1)
        self._async_sem = threading.Semaphore(max_pending_async)
        self._async_futures = []
        self._save_mutex = threading.Lock()
        self._tracked_chkpts = self._load_tracked_chkpts()
        if self.chkpt_on_preemption:
            torch_xla._XLAC._ensure_xla_coordinator_initialized(xr.process_index(), xr.process_count(),
                                                                xr.get_master_ip())
            torch_xla._XLAC._activate_preemption_sync_manager()

    def _load_tracked_chkpts(self) -> Deque[_CheckpointMetadata]:
        tracked, invalid = [], []
        fs, raw = url_to_fs(self.base_path)
        if not fs.exists(raw):
            fs.mkdir(raw)
        else:
            for p in fs.ls(raw, detail=False):
                try:
                    with fs.open(os.path.join(p, _MANAGER_METADATA_FILE), 'rb') as f:
                        tracked.append(pickle.load(f))
                except Exception:
                    invalid.append(p)
        if invalid:
            logging.warning(f'Ignoring invalid checkpoints: {invalid}')
        return deque(sorted(tracked, key=lambda m: m.ts))

    def _get_path(self, step: int) -> str:
        return os.path.join(self.base_path, str(step))

    def _delete_chkpt_at_step(self, step):
        if dist.get_rank(self.pg) == 0:
            fs, raw = url_to_fs(self._get_path(step))
            if fs.exists(raw):
                fs.rm(raw, recursive=True)

    def _release_oldest_checkpoints(self):
        if self.max_to_keep > 0:
            while len(self._tracked_chkpts) > self.max_to_keep:
                self._delete_chkpt_at_step(self._tracked_chkpts.popleft().step)

    def _wait_for_data(self):
        torch_xla.sync()
        xm.wait_device_ops()

    def _save(self, step, state_dict):
        """Writes the checkpoint of `step` (the state's data must be computed already)."""
        with self._save_mutex:
            path = self._get_path(step)
            self._delete_chkpt_at_step(step)
            # a step saved again is the newest checkpoint now
            self._tracked_chkpts = deque(m for m in self._tracked_chkpts if m.step != step)
            dist_cp.save(state_dict=state_dict,
                         storage_writer=FsspecWriter(path, thread_count=self.num_of_threads, per_thread_copy_ahead=0),
                         planner=SPMDSavePlanner(), process_group=self.pg)
            metadata = _CheckpointMetadata(step=step, ts=datetime.now())
            self._tracked_chkpts.append(metadata)
            if dist.get_rank(self.pg) == 0:
                with fsspec.open(os.path.join(path, _MANAGER_METADATA_FILE), 'wb') as f:
                    pickle.dump(metadata, f)
                self._release_oldest_checkpoints()

    def should_save(self, step: int) -> bool:
        preempted = self.chkpt_on_preemption and self.reached_preemption(step)
        if preempted:
            logging.warning(f'Preemption sync point reached at step {step}. Triggering a checkpoint.')
        return step % self.save_interval == 0 or preempted

    def save(self, step, state_dict: STATE_DICT_TYPE, force: Optional[bool] = False) -> bool:
        """Checkpoints `state_dict` now if should_save(step) or `force`; whether it did."""
        if self.should_save(step) or force:
            self._wait_for_data()
            self._save(step, state_dict)
            return True
        return False

    def save_async(self, step: int, state_dict: STATE_DICT_TYPE, force: Optional[bool] = False) -> bool:
        """As save, but only the copy to the host happens now; the write runs in the background
        (waiting first while max_pending_async writes are pending)."""
        if self.should_save(step) or force:
            self._wait_for_data()
            cpu_state = _sharded_cpu_state_dict(state_dict)
            self._async_sem.acquire()

            def write():
                try:
                    self._save(step, cpu_state)
                finally:
                    self._async_sem.release()

            self._async_futures.append(self._async_worker_pool.submit(write))
            return True
        return False

    def restore(self, step: int, state_dict: STATE_DICT_TYPE) -> None:
        """Loads the checkpoint of `step` into `state_dict` in place (resharded to its tensors'
        shardings)."""
        tracked = [m.step for m in self._tracked_chkpts]
        assert step in tracked, f'Cannot restore from untracked step {step}. Valid steps are: {tracked}'
        dist_cp.load(state_dict=state_dict, storage_reader=FsspecReader(self._get_path(step)),
                     planner=SPMDLoadPlanner(), process_group=self.pg)

    def all_steps(self) -> List[int]:
        """The steps of the checkpoints kept, oldest first."""
        return [m.step for m in self._tracked_chkpts]

    def join(self):
        """Waits for the background checkpoints; raises the first one's error if one failed."""
        futures, self._async_futures = self._async_futures, []
        wait(futures)
        for f in futures:
            f.result()

    def reached_preemption(self, step: int) -> bool:
        """Whether `step` is the step at which to checkpoint for a noticed preemption: the first
        step asked about after any process of the group received one (every process asks at the
        same steps, so they agree on it)."""
        noticed = torch_xla._XLAC._txla_preemption_noticed()
        if dist.get_world_size(self.pg) > 1:
            flag = torch.tensor([int(noticed)])
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.pg)
            noticed = bool(flag.item())
        return torch_xla._XLAC._txla_sync_point_reached(step, noticed)
