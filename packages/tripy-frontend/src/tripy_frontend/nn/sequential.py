"""tp.Sequential: modules (or one-argument callables) applied one after another."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Tuple, Union

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.nn.module import Module
from tripy_frontend.tensor import Tensor

ModuleLike = Union[Module, Callable[[Tensor], Tensor]]


@public_api(document_under="modules")
class Sequential(Module):
    """Applies its modules in order, each to the output of the previous one.

    Give the modules as positional arguments (named ``"0"``, ``"1"``, ...) or as one dict of names to
    modules. Plain callables such as lambdas may be mixed in; they have no parameters. Parameter names
    follow PyTorch: ``"0.weight"``, or ``"h.0.attn.c_attn.weight"`` when nested.

    .. code-block:: python

        model = tp.Sequential(tp.Linear(2, 3), lambda x: tp.maximum(x, tp.zeros_like(x)), tp.Linear(3, 1))
        model.initialize_dummy_parameters()
        assert len(model) == 3 and isinstance(model[0], tp.Linear)
        assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
        assert model(tp.ones((4, 2))).shape == (4, 1)
    """

    modules: Dict[str, ModuleLike]

    def __init__(self, *modules: Union[ModuleLike, Dict[str, ModuleLike]]) -> None:
        super().__init__()
        items: List[Tuple[str, Any]]
        if len(modules) == 1 and isinstance(modules[0], dict):
            items = list(modules[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(modules)]
        for name, m in items:
            if not isinstance(name, str):
                raise_error(f"tp.Sequential: module names must be strings, but got {name!r}.", _stack.capture())
            if isinstance(m, dict) or not callable(m):
                raise_error(
                    f"tp.Sequential: entry '{name}' is a {type(m).__name__}, not a module or a callable.",
                    _stack.capture(),
                    ["Pass modules as separate arguments, or a single dict of them."],
                )
        self.modules = dict(items)

    def forward(self, input: Any) -> Any:
        """Apply each module in turn."""
        for module in self.modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[ModuleLike]:
        return iter(self.modules.values())

    def __getitem__(self, idx: Union[int, str, slice]) -> Any:
        """A module by position (negative counts from the end), by name, or a slice as a new Sequential."""
        keys = list(self.modules)
        if isinstance(idx, slice):
            return Sequential({k: self.modules[k] for k in keys[idx]})
        if isinstance(idx, int) and not isinstance(idx, bool):
            if not -len(keys) <= idx < len(keys):
                raise_error(f"tp.Sequential index {idx} is out of range for {len(keys)} modules.", _stack.capture())
            return self.modules[keys[idx]]
        if isinstance(idx, str) and idx in self.modules:
            return self.modules[idx]
        raise_error(f"tp.Sequential has no module named {idx!r}.", _stack.capture(), [f"Available names: {keys}"])

    def __getattr__(self, name: str) -> Any:
        modules = self.__dict__.get("modules")
        if modules is not None and name in modules:
            return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def named_children(self) -> Iterator[Tuple[str, Module]]:
        """The modules (not plain callables) by name: ``"0"``, ``"1"``, ... or the dict's keys."""
        for name, module in self.modules.items():
            if isinstance(module, Module):
                yield name, module
