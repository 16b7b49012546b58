"""Switches of the torch.compile bridge (PyTorch/XLA's torch_xla._dynamo.config)."""

# Skip the check that a compiled graph's inputs are device data: a call with a pending input (a
# value still to be computed) then raises instead of joining the caller's lazy graph.
skip_input_data_check = False

# Not in PyTorch/XLA. Off (as PyTorch/XLA does): a compiled graph runs when it is called, its
# pending inputs computed first in a run of their own (counter DynamoSyncInputExecuteTime). On: a
# call whose inputs are pending, or a graph's first call in a step, joins the caller's lazy graph
# instead (counter DynamoInlinedCapturedGraph), so a training step's forward, backward and update
# compile as one graph at the barrier, as on the lazy path.
join_lazy_graph = False
