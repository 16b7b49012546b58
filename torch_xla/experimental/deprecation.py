"""Deprecating a function in favour of another (PyTorch/XLA's torch_xla.experimental.deprecation):
the old name keeps working, calls the new function, and logs a warning the first time."""
import functools
import importlib
import logging


def deprecated(module, new, old_name=None, extra_msg=None):
    """`new` under `module`.`old_name`, warning once (logging) that the old name is deprecated."""
    old_name = old_name or new.__name__
    warned = []

    @functools.wraps(new)
    def old(*args, **kwargs):
        if not warned:
            warned.append(True)
            message = (f'{module.__name__}.{old_name} is deprecated. Use {getattr(new, "__module__", "?")}.'
                       f'{new.__name__} instead.')
            logging.warning(message + (f' {extra_msg}' if extra_msg else ''))
        return new(*args, **kwargs)

    return old


def mark_deprecated(new, extra_msg=None):
    """Decorator: the decorated function becomes a deprecated name of `new`."""

    def decorator(func):
        return deprecated(importlib.import_module(func.__module__), new, old_name=func.__name__, extra_msg=extra_msg)

    return decorator


def register_deprecated(module, new, extra_msg=None):
    """`module`.`new.__name__` becomes a deprecated name of `new`."""
    setattr(module, new.__name__, deprecated(module, new, extra_msg=extra_msg))
