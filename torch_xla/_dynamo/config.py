"""Switches of the torch.compile bridge (PyTorch/XLA's torch_xla._dynamo.config)."""

# Skip the check that a compiled graph's inputs are device data: a call with a pending input (a
# value still to be computed) then raises instead of joining the caller's lazy graph.
skip_input_data_check = False
