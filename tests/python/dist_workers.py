"""Replica functions for test_distributed.py (spawned processes import them by name)."""
import os

import torch
import torch.nn.functional as F


def train_mnist(index, steps, batches, out_dir):
    import torch_xla.core.xla_model as xm
    from mnist_model import MNIST
    dev = xm.xla_device()
    world, rank = xm.xrt_world_size(), xm.get_ordinal()
    torch.manual_seed(0)
    model = MNIST().train().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for data, target in batches[:steps]:
        opt.zero_grad()
        loss = F.nll_loss(model(data.chunk(world)[rank].to(dev)), target.chunk(world)[rank].to(dev))
        loss.backward()
        xm.optimizer_step(opt)
        xm.mark_step()
    import torch_xla
    xm.wait_device_ops()  # the last step's graph may still be running
    # The gradients were all-reduced inside the compiled step graphs, all of them in one
    # collective per step, and nothing fell back to the interpreter.
    counters = {n: torch_xla._XLAC._xla_counter_value(n) for n in ('CollectiveAllReduce', 'InterpretedGraph')}
    expected = steps if world > 1 else None
    assert counters == {'CollectiveAllReduce': expected, 'InterpretedGraph': None}, counters
    torch.save({k: v.detach().cpu() for k, v in model.named_parameters()}, os.path.join(out_dir, f'{rank}.pt'))


def collectives(index, out_dir):
    import torch_xla.core.xla_model as xm
    dev = xm.xla_device()
    rank, world = xm.get_ordinal(), xm.xrt_world_size()
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 10 * rank
    x = base.to(dev)
    out = {
        'sum': xm.all_reduce(xm.REDUCE_SUM, x, scale=0.5).cpu(),
        'max': xm.all_reduce(xm.REDUCE_MAX, x).cpu(),
        'min': xm.all_reduce(xm.REDUCE_MIN, x).cpu(),
        'mul': xm.all_reduce(xm.REDUCE_MUL, x).cpu(),
        'gather0': xm.all_gather(x, dim=0).cpu(),
        'gather1': xm.all_gather(x, dim=1).cpu(),
        'scatter': xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 0, world).cpu(),
        'rendezvous': xm.rendezvous('point', payload=bytes([rank])),
        'mesh': xm.mesh_reduce('mesh', rank + 1, sum),
        # rows split between the replicas, columns joined: replica r gets row block r of each.
        'all_to_all': xm.all_to_all(x, 0, 1, world).cpu(),
    }
    in_place = [(base + 1).to(dev), (base * 2).to(dev), base.long().t().to(dev)]  # two buckets
    xm.all_reduce(xm.REDUCE_SUM, in_place)
    out['in_place'] = [t.cpu() for t in in_place]
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.fill_(rank)
    lin = lin.to(dev)
    xm.broadcast_master_param(lin)
    out['broadcast'] = lin.weight.cpu()
    torch.save(out, os.path.join(out_dir, f'{rank}.pt'))


def grouped_collectives(index, out_dir):
    """Replica groups [[1, 0], [3, 2]]: in the group's order, not the ranks'."""
    import torch_xla
    import torch_xla.core.xla_model as xm
    dev = xm.xla_device()
    rank = xm.get_ordinal()
    groups = [[1, 0], [3, 2]]
    x = torch.full((2, 2), float(rank)).to(dev)
    total = xm.all_reduce(xm.REDUCE_SUM, x, groups=groups)
    gathered = xm.all_gather(x, dim=1, groups=groups)
    shard = xm.reduce_scatter(xm.REDUCE_SUM, torch.arange(4.).to(dev) + rank, 1.0, 0, 2, groups=groups)
    pending = [torch_xla._XLAC._xla_has_pending_ir(t) for t in (total, gathered, shard)]
    xm.mark_step()
    torch.save({'sum': total.cpu(), 'gather': gathered.cpu(), 'shard': shard.cpu(), 'pending': pending},
               os.path.join(out_dir, f'{rank}.pt'))


def fail_on_one(index, message):
    import torch_xla.core.xla_model as xm
    if xm.get_ordinal() == 1:
        raise ValueError(message)
    # The others wait in a collective that can never complete: the launcher must end them.
    xm.rendezvous('never')


def xla_backend_collectives(index, out_dir):
    import torch.distributed as dist
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.xla_backend  # noqa: F401  registers 'xla'
    dist.init_process_group('xla', init_method='xla://')
    dev = xm.xla_device()
    rank = dist.get_rank()
    x = (torch.arange(4, dtype=torch.float32) + rank).to(dev)
    dist.all_reduce(x)
    y = torch.full((3,), float(rank)).to(dev)
    dist.broadcast(y, src=1)
    parts = [torch.zeros(2).to(dev) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, torch.full((2,), float(rank + 1)).to(dev))
    dist.barrier()
    torch.save({'backend': dist.get_backend(), 'sum': x.cpu(), 'broadcast': y.cpu(),
                'gather': [p.cpu() for p in parts], 'device': x.device.type},
               os.path.join(out_dir, f'{rank}.pt'))


def train_mnist_ddp(index, steps, batches, out_dir, bucket_view):
    """The train_mnist job through DistributedDataParallel on the 'xla' process-group backend."""
    import torch.distributed as dist
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.xla_backend  # noqa: F401  registers 'xla'
    from torch.nn.parallel import DistributedDataParallel as DDP
    from mnist_model import MNIST
    dist.init_process_group('xla', init_method='xla://')
    dev = xm.xla_device()
    world, rank = dist.get_world_size(), dist.get_rank()
    torch.manual_seed(0)
    model = MNIST().train()
    with torch.no_grad():  # replicas start apart: DDP must broadcast the master's parameters
        for p in model.parameters():
            p.add_(rank)
    model = DDP(model.to(dev), gradient_as_bucket_view=bucket_view)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for data, target in batches[:steps]:
        opt.zero_grad()
        loss = F.nll_loss(model(data.chunk(world)[rank].to(dev)), target.chunk(world)[rank].to(dev))
        loss.backward()  # DDP averages the gradients across replicas as they become ready
        opt.step()
        xm.mark_step()
    xm.wait_device_ops()
    import torch_xla
    # DDP's bucket all-reduces ran inside the compiled step graphs.
    assert torch_xla._XLAC._xla_counter_value('CollectiveAllReduce') >= steps
    assert torch_xla._XLAC._xla_counter_value('InterpretedGraph') is None
    torch.save({k: v.detach().cpu() for k, v in model.module.named_parameters()},
               os.path.join(out_dir, f'{rank}.pt'))


def crash_on_one(index):
    import torch_xla.core.xla_model as xm
    if xm.get_ordinal() == 1:
        os._exit(7)  # dies without a Python exception (as a crash would)
    xm.rendezvous('never')


def train_until_stopped(index, marker_dir, kill_rank=None):
    """Trains with a gradient all-reduce in every step's graph until something stops it. At step
    5 each replica leaves a marker file (the test then cuts the network); replica `kill_rank`
    SIGKILLs itself at step 5, while the others are in that step's collective."""
    import signal
    import torch_xla.core.xla_model as xm
    dev = xm.xla_device()
    rank = xm.get_ordinal()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16).to(dev)
    for step in range(1, 100000):
        if step == 5:
            open(os.path.join(marker_dir, f'step5-{rank}'), 'w').close()
            if rank == kill_rank:
                os.kill(os.getpid(), signal.SIGKILL)
        opt.zero_grad()
        model(x).square().mean().backward()
        xm.optimizer_step(opt)
        xm.mark_step()
        if step % 10 == 0:
            xm.wait_device_ops()


def ordinal_and_sum(scale):
    """For run_multiprocess: this replica's ordinal, and an all-reduced value, on the CPU."""
    import torch_xla.core.xla_model as xm
    rank = xm.get_ordinal()
    total = xm.all_reduce(xm.REDUCE_SUM, torch.full((2,), float(rank + 1), device=xm.xla_device()))
    return rank * scale, total.cpu().tolist()


def functional_collectives(index, out_dir):
    """torch.distributed._functional_collectives on xla tensors, lazily and under torch.compile."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met
    import torch_xla.distributed.xla_backend  # noqa: F401  registers 'xla'
    dist.init_process_group('xla', init_method='xla://')
    dev = xm.xla_device()
    rank, world = dist.get_rank(), dist.get_world_size()
    group = dist.group.WORLD
    x = (torch.arange(4, dtype=torch.float32) + rank).to(dev)
    out = {
        'sum': funcol.wait_tensor(funcol.all_reduce(x, 'sum', group)),
        'avg': funcol.all_reduce(x, 'avg', group),
        'max': funcol.all_reduce(x, 'max', group),
        'gather': funcol.all_gather_tensor(x.view(2, 2), 0, group),
        'scatter': funcol.reduce_scatter_tensor(torch.arange(4. * world).to(dev) * (rank + 1), 'sum', 0, group),
    }
    barriers_before = met.counter_value('MarkStep') or 0
    # Recorded into the graph: nothing ran yet, no barrier was issued.
    # (funcol hands eager callers AsyncCollectiveTensor wrappers; an op on one gives the value)
    out['pending'] = 'txla::all_reduce' in torch_xla._XLAC._get_xla_tensors_text([out['sum'] + 0])
    xm.mark_step()
    out['barriers'] = (met.counter_value('MarkStep') or 0) - barriers_before

    def step(a, b):
        return funcol.all_reduce(a * 2, 'sum', group) + b

    torch._dynamo.reset()
    # Calls may join the caller's lazy graph; a graph with collectives still does not.
    from torch_xla._dynamo import config as dynamo_config
    dynamo_config.join_lazy_graph = True
    compiled = torch.compile(step, backend='openxla_eval')
    results = []
    for k in range(3):
        a = torch.full((3,), float(rank + k)).to(dev)
        # The last call's input is pending: a graph with collectives is not inlined into the
        # caller's graph (its token chain stays its own); the input is computed first.
        if k == 2:
            a = a * 1
        results.append(compiled(a, torch.ones(3).to(dev)).cpu())
    out['compiled'] = results
    out['inlined'] = met.counter_value('DynamoInlinedCapturedGraph') or 0
    out['captured'] = met.counter_value('DynamoCapturedGraph') or 0
    out['replayed'] = met.counter_value('DynamoRunCapturedGraph') or 0
    out['lazy_graphs'] = met.counter_value('DynamoLazyGraph') or 0
    # A graph with collectives first called with a pending input: traced on a stand-in of the
    # input, then run on its own with the input materialized (not inlined).
    torch._dynamo.reset()
    scaled = torch.compile(lambda a: funcol.all_reduce(a * 3, 'sum', group), backend='openxla_eval')
    out['first_pending'] = [scaled(torch.full((2,), float(rank + k)).to(dev) * 1).cpu() for k in range(2)]
    out['first_pending_inlined'] = (met.counter_value('DynamoInlinedCapturedGraph') or 0) - out['inlined']
    torch.save({k: (v.cpu() if isinstance(v, torch.Tensor) else v) for k, v in out.items()},
               os.path.join(out_dir, f'{rank}.pt'))


def regression_problem(inputs, outputs):
    """A batch of 8 (x, y) rows, the same on every replica."""
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, inputs, generator=g), torch.randn(8, outputs, generator=g)


def train_on_halves(model, opt, x, y, steps):
    """`steps` steps of mean squared error, each replica on its half of the batch."""
    import torch_xla.core.xla_model as xm
    dev = xm.xla_device()
    world, rank = xm.xrt_world_size(), xm.get_ordinal()
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x.chunk(world)[rank].to(dev)) - y.chunk(world)[rank].to(dev))**2).mean()
        loss.backward()
        opt.step()
        xm.mark_step()
    return rank


def train_zero1(index, steps, out_dir):
    """ZeRO-1 Adam with gradient clipping over the replicas, each on its half of the batch."""
    import torch_xla.core.xla_model as xm
    from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 7).to(xm.xla_device())  # 7 rows: shards are padded
    opt = ZeroRedundancyOptimizer(model.parameters(), torch.optim.Adam, lr=0.1, grad_clipping=True, max_norm=0.5,
                                  save_master_weights=True)
    rank = train_on_halves(model, opt, *regression_problem(5, 7), steps)
    state = opt.state_dict()
    torch.save({'params': {k: v.detach().cpu() for k, v in model.named_parameters()},
                'shard_shapes': [tuple(s['exp_avg'].shape) for s in state['base_state'].values()],
                'norm': opt.grad_norm.cpu()}, os.path.join(out_dir, f'{rank}.pt'))


def sync_batch_norm(index, out_dir):
    """SyncBatchNorm on this replica's half of a batch: output, input gradient, running stats."""
    import torch_xla.core.functions as xf
    import torch_xla.core.xla_model as xm
    dev = xm.xla_device()
    world, rank = xm.xrt_world_size(), xm.get_ordinal()
    x = torch.randn(8, 3, 4, 4, generator=torch.Generator().manual_seed(0)).chunk(world)[rank].to(dev)
    x.requires_grad_()
    bn = xf.SyncBatchNorm(3).to(dev)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    out = bn(x)
    (out * out.detach().cos()).sum().backward()
    xm.mark_step()
    torch.save({'out': out.detach().cpu(), 'grad': x.grad.cpu(), 'mean': bn.running_mean.cpu(),
                'var': bn.running_var.cpu()}, os.path.join(out_dir, f'{rank}.pt'))


def fsdp_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))


def train_fsdp(index, steps, out_dir):
    """Nested FSDP (the first layer wrapped alone, the rest by the root) on this replica's half of
    the batch; saves its sharded checkpoint."""
    import torch_xla.core.xla_model as xm
    from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
    model = fsdp_model()
    model[0] = FSDP(model[0])
    model = FSDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rank = train_on_halves(model, opt, *regression_problem(6, 3), steps)
    xm.save({'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata(),
             'shard_sizes': [p.numel() for p in model.parameters()]},
            os.path.join(out_dir, f'ckpt_rank-{rank}.pth'), master_only=False)
