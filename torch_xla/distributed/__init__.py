"""Data-parallel training over processes: spawn, collectives (torch.distributed with Gloo), loaders."""
