"""One process per device: `spawn(fn, args, nprocs)` starts the replicas of a job, each calling
fn(index, *args) with its own device as xla:0; an exception (or a crash) in any replica ends all
of them, and the failing replica's error is raised here."""
import os
import socket

import torch.multiprocessing as mp

from torch_xla._internal import config


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _replica(index, fn, args, env):
    # Topology first: the runtime reads it when imported. Hosts: XLA_NUM_HOSTS and XLA_HOST_RANK
    # (or the usual NNODES / NODE_RANK) make a multi-host job of local_count processes per host.
    os.environ.update(env)
    config.LOCAL_RANK.set(index)
    config.RANK.set(config.XLA_HOST_RANK.get() * config.LOCAL_WORLD_SIZE.get() + index)
    config.CPU_NUM_DEVICES.set(1)  # each replica sees its own device as xla:0
    fn(index, *args)


def spawn(fn, args=(), nprocs=None, join=True, daemon=False, start_method='spawn'):
    nprocs = config.CPU_NUM_DEVICES.get() if nprocs in (None, -1) else nprocs
    hosts = config.XLA_NUM_HOSTS.get()
    port = config.MASTER_PORT.get()
    env = {
        config.WORLD_SIZE.name: str(nprocs * hosts),
        config.LOCAL_WORLD_SIZE.name: str(nprocs),
        config.XLA_NUM_HOSTS.name: str(hosts),
        config.XLA_HOST_RANK.name: str(config.XLA_HOST_RANK.get()),
        config.MASTER_ADDR.name: config.MASTER_ADDR.get(),
        config.MASTER_PORT.name: str(port if port is not None else _free_port()),
    }
    # torch.multiprocessing ends every replica when one fails and raises its traceback here.
    return mp.start_processes(_replica, args=(fn, args, env), nprocs=nprocs, join=join,
                              daemon=daemon, start_method=start_method)
