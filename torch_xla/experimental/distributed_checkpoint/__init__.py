"""Distributed checkpointing of sharded (SPMD) state with torch.distributed.checkpoint
(PyTorch/XLA 2.9's `torch_xla.experimental.distributed_checkpoint`).

`SPMDSavePlanner` writes each device's piece of a sharded tensor as its own chunk;
`SPMDLoadPlanner` reads into the pieces of a tensor sharded however it is now (another mesh,
another partition spec: the checkpoint is resharded on load); `CheckpointManager` keeps
per-step checkpoints (periodic, asynchronous, on preemption) under one directory."""
from .manager import CheckpointManager
from .planners import SPMDLoadPlanner, SPMDSavePlanner
from .util import prime_optimizer

__all__ = ['CheckpointManager', 'SPMDSavePlanner', 'SPMDLoadPlanner', 'prime_optimizer']
