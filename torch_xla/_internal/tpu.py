"""TPU queries (`torch_xla._internal.tpu`), answered for a machine without TPUs: scripts and
tests that ask which TPU generation runs them get 'none' (version -1) and skip TPU-only paths."""


def version() -> int:
    """The TPU generation; -1: there is no TPU."""
    return -1


def num_available_chips() -> int:
    return 0


def num_available_devices() -> int:
    return 0


def num_expected_global_devices() -> int:
    return 0


def task_id():
    return None


def worker_id() -> int:
    return 0
