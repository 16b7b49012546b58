"""Auto-wrap policies: which submodules an FSDP wrapper wraps as units of their own.

A policy is called as policy(module=, recurse=, unwrapped_params=): with recurse=True it says
whether to look inside `module`, with recurse=False whether to wrap it."""
from typing import Any, Callable, Optional, Set, Tuple, Type

import torch.nn as nn


def always_wrap_policy(*args, **kwargs) -> bool:
    return True


def lambda_auto_wrap_policy(module: nn.Module, recurse: bool, unwrapped_params: int,
                            lambda_fn: Callable) -> bool:
    """Wraps the modules `lambda_fn(module)` is true for."""
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module: nn.Module, recurse: bool, unwrapped_params: int,
                                 transformer_layer_cls: Set[Type[nn.Module]]) -> bool:
    """Wraps every instance of the given layer classes (a transformer's blocks)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: nn.Module, recurse: bool, unwrapped_params: int,
                                min_num_params: int = int(1e8),
                                force_leaf_modules: Optional[Set[Type[nn.Module]]] = None,
                                exclude_wrap_modules: Optional[Set[Type[nn.Module]]] = None) -> bool:
    """Wraps modules holding at least `min_num_params` parameters not wrapped yet."""
    leaves = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    excluded = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
                if exclude_wrap_modules is None else exclude_wrap_modules)
    large = unwrapped_params >= min_num_params
    if recurse:
        return large and not isinstance(module, tuple(leaves))
    return large and not isinstance(module, tuple(excluded))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


def _wrap(module: nn.Module, wrapper_cls: Callable, **kwargs) -> nn.Module:
    overrides = getattr(module, '_wrap_overrides', None)
    return wrapper_cls(module, **({**kwargs, **overrides} if overrides else kwargs))


def recursive_wrap(module: nn.Module, auto_wrap_policy: Callable, wrapper_cls: Callable,
                   ignored_modules: Set[nn.Module], ignored_params: Set[nn.Parameter],
                   only_wrap_children: bool = False, **kwargs: Any) -> Tuple[nn.Module, int]:
    """Wraps the children of `module` the policy picks (depth first), then `module` itself
    unless `only_wrap_children`. Returns the module and how many parameters were wrapped."""
    assert auto_wrap_policy is not None, 'Must specify auto_wrap_policy.'
    assert wrapper_cls is not None, 'Must specify wrapper_cls'
    if isinstance(wrapper_cls, type):
        for _, child in module.named_modules():
            assert child in ignored_modules or not isinstance(child, wrapper_cls), \
                'a submodule is wrapped already'
    params = sum(p.numel() for p in module.parameters() if p not in ignored_params)
    if not auto_wrap_policy(module=module, recurse=True, unwrapped_params=params):
        return module, 0
    wrapped = 0
    for name, child in module.named_children():
        if child in ignored_modules:
            continue
        new_child, count = recursive_wrap(child, auto_wrap_policy, wrapper_cls, ignored_modules, ignored_params,
                                          **kwargs)
        setattr(module, name, new_child)
        wrapped += count
    remainder = params - wrapped
    if not only_wrap_children and auto_wrap_policy(module=module, recurse=False, unwrapped_params=remainder):
        return _wrap(module, wrapper_cls, **kwargs), params
    return module, wrapped
