"""PyTorch/XLA's torch.compile support lives under this name too (see torch_xla.core.dynamo_bridge)."""
