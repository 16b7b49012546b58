"""ZeRO-1 (PyTorch/XLA's `torch_xla.distributed.zero_redundancy_optimizer`): the optimizer state is
split over the data-parallel replicas.

Each replica keeps one shard (dimension 0, padded to a multiple of the replica count) of every
parameter as the wrapped optimizer's parameter. A step reduce-scatters each gradient (the mean
over replicas, each keeping its shard), optionally clips by the global norm (one all-reduce of the
squared shard norms), runs the wrapped optimizer on the shards, and all-gathers the updated shards
back into the full parameters. The collectives are the graph collectives of torch_xla.core
(recorded into the step's graph). On one replica it is the wrapped optimizer on whole parameters,
with the state dict's extra fields."""
import logging
from typing import Any, Dict, Iterator, List, Optional, Type

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer

import torch_xla
import torch_xla.core.xla_model as xm


class ZeroRedundancyOptimizer(Optimizer):
    """`optimizer_class(shards, **defaults)` over this replica's shards of `params`.

    Options as PyTorch/XLA 2.9 spells them: `optimizer_dtype` (of the shards and the state;
    float32), `grad_clipping` with `max_norm` (global 2-norm, 1.0), `sharding_groups` (replica
    groups that share one set of shards; default all), `grad_norm_groups` (one more all-reduce of
    the norm), `lazy_init` (shard at `init_zero()`), `save_master_weights` (the state dict keeps
    the shards). `pin_layout`, the bucket sizes, `use_grad_acc_hook` and `higher_cc_precision`
    are accepted; collectives here move each tensor as it is."""

    def __init__(self, params: Iterator[torch.Tensor], optimizer_class: Type[Optimizer],
                 optimizer_dtype: Optional[Any] = None, grad_clipping: bool = True, max_norm: Optional[float] = None,
                 pin_layout: bool = True, sharding_groups: Optional[Any] = None,
                 grad_norm_groups: Optional[Any] = None, lazy_init: bool = False, bucket_cap_mb_all_gather: int = 0,
                 bucket_cap_mb_reduce_scatter: int = 0, use_grad_acc_hook: bool = False,
                 save_master_weights: bool = False, higher_cc_precision: bool = False, **defaults: Any):
        if not save_master_weights:
            logging.warning('ZeroRedundancyOptimizer: without save_master_weights, a resumed run starts from the '
                            'full parameters rounded to their dtype')
        super().__init__(params, defaults)
        # The replicas: processes of a job, or the devices of threaded data parallelism.
        self.global_world_size = xm.xrt_world_size()
        self.global_rank = xm.get_ordinal()
        self._sharding_groups = ([list(range(self.global_world_size))]
                                 if sharding_groups is None else [list(g) for g in sharding_groups])
        self._grad_norm_groups = grad_norm_groups
        self.optimizer_class = optimizer_class
        self.defaults = defaults
        self.optimizer_dtype = optimizer_dtype if optimizer_dtype is not None else torch.float32
        self.grad_clipping = grad_clipping
        self.max_norm = 1.0 if max_norm is None else max_norm
        self.save_master_weights = save_master_weights
        self._grad_norm = None
        self.inited = False
        if not lazy_init:
            self.init_zero()

    # Sharding ----------------------------------------------------------------------------------

    @property
    def sharding_groups(self):
        return self._sharding_groups

    @sharding_groups.setter
    def sharding_groups(self, groups):
        assert not self.inited, 'already inited, cannot change sharding_groups'
        self._sharding_groups = [list(g) for g in groups]

    @property
    def grad_norm(self):
        """The global gradient norm of the last step (with grad_clipping), a device tensor."""
        return self._grad_norm

    def init_zero(self):
        """Cuts this replica's shards and makes the wrapped optimizer over them."""
        mine = [g for g in self._sharding_groups if self.global_rank in g]
        if not mine:
            raise ValueError(f'Current rank {self.global_rank} is missing from the sharding_groups '
                             f'{self._sharding_groups}')
        self.local_world_size = len(mine[0])
        self.local_rank = mine[0].index(self.global_rank)
        self.device = None
        shard_groups = []
        for group in self.param_groups:
            shards = []
            for param in group['params']:
                if self.device is None:
                    self.device = param.device
                if param.device != self.device:
                    raise ValueError('ZeroRedundancyOptimizer: parameters must all be on one device')
                data = self._shard(param.detach()).to(self.optimizer_dtype)
                shards.append(nn.Parameter(data.clone(), requires_grad=param.requires_grad))
            shard_groups.append(dict(group, params=shards))
        if self.device is None or self.device.type != 'xla':
            raise ValueError('ZeroRedundancyOptimizer shards xla parameters')
        self.base_optimizer = self.optimizer_class(shard_groups, **self.defaults)
        self._copy_hyperparameters(self.param_groups, self.base_optimizer.param_groups)
        self.inited = True

    def _padded(self, t):
        rows = t.shape[0] if t.dim() else 1
        t = t.reshape(1) if t.dim() == 0 else t
        extra = -rows % self.local_world_size
        return F.pad(t, [0, 0] * (t.dim() - 1) + [0, extra]) if extra else t

    def _shard(self, t):
        return self._padded(t).chunk(self.local_world_size)[self.local_rank]

    @staticmethod
    def _copy_hyperparameters(src: List[Dict[str, Any]], dst: List[Dict[str, Any]]):
        assert len(src) == len(dst), 'Mismatch between number of source and destination parameter groups'
        for s, d in zip(src, dst):
            for key, value in s.items():
                if key != 'params':
                    d[key] = value

    def _pairs(self):
        for group, shard_group in zip(self.param_groups, self.base_optimizer.param_groups):
            yield from zip(group['params'], shard_group['params'])

    # The step ----------------------------------------------------------------------------------

    @torch.no_grad()
    def step(self, closure=None, **kwargs):
        """Reduce-scatters the gradients, clips them, steps the shards and gathers the parameters."""
        assert self.inited, 'must call init_zero() first'
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._copy_hyperparameters(self.param_groups, self.base_optimizer.param_groups)
        for param, shard in self._pairs():
            if param.grad is None:
                continue
            grad = xm.reduce_scatter(xm.REDUCE_SUM, self._padded(param.grad), scale=1.0 / self.local_world_size,
                                     scatter_dim=0, shard_count=self.local_world_size,
                                     groups=self._sharding_groups)
            shard.grad = grad.to(self.optimizer_dtype)
        if self.grad_clipping:
            self._clip_grad_norm(self.max_norm)
        self.base_optimizer.step(**kwargs)
        self.base_optimizer.zero_grad(set_to_none=True)
        self.allgather_weights_and_update_full_parameter()
        self._copy_hyperparameters(self.base_optimizer.param_groups, self.param_groups)
        return loss

    def _clip_grad_norm(self, max_norm, norm_type=2.0):
        if float(norm_type) != 2.0:
            raise RuntimeError(f'only norm type 2 is supported, getting {norm_type}')
        squares = torch.zeros([], dtype=self.optimizer_dtype, device=self.device)
        for _, shard in self._pairs():
            if shard.grad is not None:
                squares = squares + (shard.grad * shard.grad).sum()
        squares = xm.all_reduce(xm.REDUCE_SUM, squares, groups=self._sharding_groups)
        if self._grad_norm_groups is not None:
            squares = xm.all_reduce(xm.REDUCE_SUM, squares, groups=self._grad_norm_groups)
        self._grad_norm = squares.sqrt()
        coeff = torch.clamp(max_norm / (self._grad_norm + 1e-6), max=1.0)
        for _, shard in self._pairs():
            if shard.grad is not None:
                shard.grad.mul_(coeff)

    @torch.no_grad()
    def allgather_weights_and_update_full_parameter(self):
        """Every parameter that had a gradient becomes its shards gathered (in its own dtype)."""
        for param, shard in self._pairs():
            if param.grad is None:
                continue
            whole = xm.all_gather(shard.detach().to(param.dtype), dim=0, groups=self._sharding_groups)
            rows = param.shape[0] if param.dim() else 1
            param.copy_(whole[:rows].reshape(param.shape))

    def zero_grad(self, set_to_none: bool = True):
        super().zero_grad(set_to_none=set_to_none)

    # State -------------------------------------------------------------------------------------

    def get_shape_info(self):
        """{parameter index: its full shape}."""
        shapes, index = {}, 0
        for group in self.param_groups:
            for param in group['params']:
                shapes[index] = param.shape
                index += 1
        return shapes

    def state_dict(self):
        """The wrapper's state (param_groups) with `base_state` (this replica's shard states),
        `shape_info`, and with save_master_weights the shards (`sharded_master_weights`)."""
        state = super().state_dict()
        state['base_state'] = self.base_optimizer.state_dict()['state']
        state['shape_info'] = self.get_shape_info()
        if self.save_master_weights:
            state['sharded_master_weights'] = {
                k: shard.detach() for k, (_, shard) in enumerate(self._pairs())
            }
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        base_state = state_dict.pop('base_state')
        state_dict.pop('shape_info', None)
        master = state_dict.pop('sharded_master_weights', None)
        super().load_state_dict(state_dict)
        base = self.base_optimizer.state_dict()
        base['state'] = base_state
        base['param_groups'] = state_dict['param_groups']
        self.base_optimizer.load_state_dict(base)
        self._copy_hyperparameters(self.param_groups, self.base_optimizer.param_groups)
        if master is not None:
            with torch.no_grad():
                for k, (param, shard) in enumerate(self._pairs()):
                    shard.copy_(master[k])
                    param.grad = torch.zeros_like(param)  # so that the gather below updates it
            torch_xla.sync()
            self.allgather_weights_and_update_full_parameter()
            torch_xla.sync()
