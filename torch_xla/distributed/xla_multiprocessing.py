"""One process per device: `spawn(fn, args, nprocs)` starts the replicas of a job, each calling
fn(index, *args) with its own device as xla:0; an exception (or a crash) in any replica ends all
of them, and the failing replica's error is raised here."""
import os
import socket

import torch.multiprocessing as mp


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _local_devices():
    return int(os.environ.get('CPU_NUM_DEVICES', '1'))


def _replica(index, fn, args, env):
    # Topology first: the runtime reads it when imported. Hosts: XLA_NUM_HOSTS and XLA_HOST_RANK
    # (or the usual NNODES / NODE_RANK) make a multi-host job of local_count processes per host.
    local_count = int(env['LOCAL_WORLD_SIZE'])
    host_rank = int(env.get('XLA_HOST_RANK', '0'))
    os.environ.update(env)
    os.environ['LOCAL_RANK'] = str(index)
    os.environ['RANK'] = str(host_rank * local_count + index)
    os.environ['CPU_NUM_DEVICES'] = '1'  # each replica sees its own device as xla:0
    fn(index, *args)


def spawn(fn, args=(), nprocs=None, join=True, daemon=False, start_method='spawn'):
    nprocs = _local_devices() if nprocs in (None, -1) else nprocs
    hosts = int(os.environ.get('XLA_NUM_HOSTS', os.environ.get('NNODES', '1')))
    host_rank = os.environ.get('XLA_HOST_RANK', os.environ.get('NODE_RANK', '0'))
    env = {
        'WORLD_SIZE': str(nprocs * hosts),
        'LOCAL_WORLD_SIZE': str(nprocs),
        'XLA_NUM_HOSTS': str(hosts),
        'XLA_HOST_RANK': str(host_rank),
        'MASTER_ADDR': os.environ.get('MASTER_ADDR', '127.0.0.1'),
        'MASTER_PORT': os.environ.get('MASTER_PORT', str(_free_port())),
    }
    # torch.multiprocessing ends every replica when one fails and raises its traceback here.
    return mp.start_processes(_replica, args=(fn, args, env), nprocs=nprocs, join=join,
                              daemon=daemon, start_method=start_method)
