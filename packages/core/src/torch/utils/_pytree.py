"""``torch.utils._pytree``: nested containers flattened to leaves and rebuilt.

A pytree is a leaf or a container whose children are pytrees. Containers are the types with a
registered flatten/unflatten pair: tuple, list, dict, OrderedDict, defaultdict, deque,
namedtuples, and whatever a library registers (transformers registers its ``ModelOutput``
classes). ``tree_flatten`` returns the leaves in order and a :class:`TreeSpec` that
``tree_unflatten`` rebuilds the structure from. PyTorch's private names that libraries use
(``_dict_flatten_with_keys``...) are kept.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

__all__ = [
    "Context",
    "FlattenFn",
    "GetAttrKey",
    "LeafSpec",
    "MappingKey",
    "PyTree",
    "SequenceKey",
    "TreeSpec",
    "UnflattenFn",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "is_structseq",
    "is_structseq_class",
    "is_structseq_instance",
    "keystr",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_structure",
    "tree_unflatten",
]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]


# -- keys: where a child sits in its parent (for the *_with_path functions) --------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The child at index ``idx`` of a sequence."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        """The child of ``sequence`` this key names."""
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The child under ``key`` of a mapping."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        """The child of ``mapping`` this key names."""
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The child in attribute ``name`` of an object (a namedtuple's field)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        """The child of ``obj`` this key names."""
        return getattr(obj, self.name)


def keystr(kp: tuple[Any, ...]) -> str:
    """A key path as source text: ``(MappingKey('a'), SequenceKey(0))`` -> ``"['a'][0]"``."""
    return "".join(str(k) for k in kp)


# -- the registry ----------------------------------------------------------------------------


class _NodeDef(NamedTuple):
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable[[PyTree], tuple[list[tuple[Any, Any]], Context]] | None


SUPPORTED_NODES: dict[type, _NodeDef] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable[[Context], Any] | None = None,
    from_dumpable_context: Callable[[Any], Context] | None = None,
    flatten_with_keys_fn: Callable[[PyTree], tuple[list[tuple[Any, Any]], Context]] | None = None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``.

    :param cls: the container type (exact type; subclasses register themselves).
    :param serialized_type_name: the name a serialized spec uses (accepted; specs are not
        serialized here yet).
    :param flatten_with_keys_fn: like ``flatten_fn`` with ``(key, child)`` pairs, for the
        ``*_with_path`` functions.
    :raises ValueError: ``cls`` is registered already.
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = _NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _tuple_flatten(d: tuple[Any, ...]) -> tuple[list[Any], Context]:
    return list(d), None


def _tuple_flatten_with_keys(d: tuple[Any, ...]) -> tuple[list[tuple[Any, Any]], Context]:
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _tuple_unflatten(values: Iterable[Any], context: Context) -> tuple[Any, ...]:
    return tuple(values)


def _list_unflatten(values: Iterable[Any], context: Context) -> list[Any]:
    return list(values)


def _list_flatten(d: list[Any]) -> tuple[list[Any], Context]:
    return d, None


def _list_flatten_with_keys(d: list[Any]) -> tuple[list[tuple[Any, Any]], Context]:
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], Context]:
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d: dict[Any, Any]) -> tuple[list[tuple[Any, Any]], Context]:
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _dict_unflatten(values: Iterable[Any], context: Context) -> dict[Any, Any]:
    return dict(zip(context, values))


def _ordereddict_unflatten(values: Iterable[Any], context: Context) -> collections.OrderedDict:
    return collections.OrderedDict(zip(context, values))


def _defaultdict_flatten(d: collections.defaultdict) -> tuple[list[Any], Context]:
    return list(d.values()), (d.default_factory, list(d.keys()))


def _defaultdict_flatten_with_keys(d: collections.defaultdict
                                   ) -> tuple[list[tuple[Any, Any]], Context]:
    return [(MappingKey(k), v) for k, v in d.items()], (d.default_factory, list(d.keys()))


def _defaultdict_unflatten(values: Iterable[Any], context: Context) -> collections.defaultdict:
    factory, keys = context
    return collections.defaultdict(factory, zip(keys, values))


def _deque_flatten(d: collections.deque) -> tuple[list[Any], Context]:
    return list(d), d.maxlen


def _deque_unflatten(values: Iterable[Any], context: Context) -> collections.deque:
    return collections.deque(values, maxlen=context)


def _deque_flatten_with_keys(d: collections.deque) -> tuple[list[tuple[Any, Any]], Context]:
    return [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen


def _namedtuple_flatten(d: Any) -> tuple[list[Any], Context]:
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d: Any) -> tuple[list[tuple[Any, Any]], Context]:
    return [(GetAttrKey(f), v) for f, v in zip(d._fields, d)], type(d)


register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                     flatten_with_keys_fn=_tuple_flatten_with_keys)
register_pytree_node(list, _list_flatten, _list_unflatten,
                     flatten_with_keys_fn=_list_flatten_with_keys)
register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                     flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.OrderedDict, _dict_flatten, _ordereddict_unflatten,
                     flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                     flatten_with_keys_fn=_defaultdict_flatten_with_keys)
register_pytree_node(collections.deque, _deque_flatten,
                     _deque_unflatten,
                     flatten_with_keys_fn=_deque_flatten_with_keys)


def is_structseq_class(cls: type) -> bool:
    """Whether ``cls`` is a C struct sequence type (``time.struct_time``, ``os.stat_result``):
    a tuple type with named fields that is not a namedtuple."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and all(hasattr(cls, a) for a in ("n_fields", "n_sequence_fields",
                                              "n_unnamed_fields")))


def is_structseq_instance(obj: object) -> bool:
    """Whether ``obj`` is an instance of a :func:`is_structseq_class` type."""
    return is_structseq_class(type(obj))


def is_structseq(obj: object) -> bool:
    """Whether ``obj`` is a struct sequence type or an instance of one."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))  # type: ignore[arg-type]


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a namedtuple class (a tuple subclass with ``_fields``)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(
        getattr(cls, "_fields", None), tuple)


def is_namedtuple_instance(obj: object) -> bool:
    """Whether ``obj`` is a namedtuple."""
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj: object) -> bool:
    """Whether ``obj`` is a namedtuple or a namedtuple class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


# Namedtuples are one kind of node, keyed by ``collections.namedtuple`` as in PyTorch (their
# context is their class), so that code reading SUPPORTED_NODES sees them.
def _namedtuple_unflatten(values: Iterable[Any], cls: Any) -> Any:
    # a torch.return_types structseq has fields but is built from one sequence
    return cls._make(values) if hasattr(cls, "_make") else cls(values)


register_pytree_node(collections.namedtuple, _namedtuple_flatten,  # type: ignore[arg-type]
                     _namedtuple_unflatten, flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def _get_node_type(tree: Any) -> Any:
    """The key of ``tree``'s node kind in :data:`SUPPORTED_NODES`: ``collections.namedtuple``
    for a namedtuple, its type otherwise."""
    if is_namedtuple_instance(tree):
        return collections.namedtuple
    return type(tree)


def _node_def(tree: Any) -> _NodeDef | None:
    return SUPPORTED_NODES.get(_get_node_type(tree))


def _is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """PyTorch's private name for :func:`tree_is_leaf`."""
    return tree_is_leaf(tree, is_leaf)


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a registered container, or chosen by ``is_leaf``."""
    return (is_leaf is not None and is_leaf(tree)) or _node_def(tree) is None


# -- specs -----------------------------------------------------------------------------------


@dataclasses.dataclass(eq=True)
class TreeSpec:
    """The structure of a pytree without its leaves: the node type, its context and the specs
    of its children. ``num_leaves`` counts the leaves below."""

    type: Any
    context: Context
    children_specs: list[TreeSpec]

    def __post_init__(self) -> None:
        self.num_nodes = 1 + sum(s.num_nodes for s in self.children_specs)
        self.num_leaves = sum(s.num_leaves for s in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self) -> bool:
        """Whether this spec stands for a single leaf."""
        return False

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure with ``leaves`` in order."""
        return tree_unflatten(leaves, self)

    def __repr__(self) -> str:
        children = ", ".join(repr(s) for s in self.children_specs)
        name = getattr(self.type, "__name__", self.type)
        return f"TreeSpec({name}, {self.context!r}, [{children}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_nodes, self.num_leaves, self.num_children = 1, 1, 0

    def is_leaf(self) -> bool:
        """A leaf spec is a leaf."""
        return True

    def __repr__(self) -> str:
        return "*"


def _flatten(tree: PyTree, leaves: list[Any], is_leaf: Callable[[PyTree], bool] | None) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LeafSpec()
    node = _node_def(tree)
    if node is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = node.flatten_fn(tree)
    return TreeSpec(node.type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                 ) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure.

    :param is_leaf: treat the nodes it accepts as leaves (without looking inside).
    """
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _unflatten(spec: TreeSpec, leaves: Iterator[Any]) -> PyTree:
    if spec.is_leaf():
        return next(leaves)
    children = [_unflatten(s, leaves) for s in spec.children_specs]
    node = SUPPORTED_NODES.get(spec.type)
    if node is None:
        raise ValueError(f"{spec.type} is not a registered pytree node type")
    return node.unflatten_fn(children, spec.context)


def _broadcast_to_and_flatten(tree: PyTree, treespec: TreeSpec,
                              is_leaf: Callable[[PyTree], bool] | None = None
                              ) -> list[Any] | None:
    """``tree`` spread over ``treespec``'s leaves, one entry per leaf (``vmap``'s ``in_dims``
    against its inputs): a leaf of ``tree`` stands for every leaf below its place in
    ``treespec``. None when the two structures differ."""
    node = None if tree is None else _node_def(tree)  # (None: one entry, as an int is)
    if node is None or (is_leaf is not None and is_leaf(tree)):
        return [tree] * treespec.num_leaves
    if treespec.is_leaf():
        return None
    children, context = node.flatten_fn(tree)
    if (node.type is not treespec.type or context != treespec.context
            or len(children) != treespec.num_children):
        return None
    out: list[Any] = []
    for child, child_spec in zip(children, treespec.children_specs):
        sub = _broadcast_to_and_flatten(child, child_spec, is_leaf)
        if sub is None:
            return None
        out.extend(sub)
    return out


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The pytree of structure ``treespec`` holding ``leaves`` in order.

    :raises TypeError: ``treespec`` is not a TreeSpec.
    :raises ValueError: the number of leaves does not match the spec.
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
                        f"TreeSpec but got item of type {type(treespec)}.")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the "
                         f"spec refers to a pytree that holds {treespec.num_leaves} items "
                         f"({treespec}).")
    return _unflatten(treespec, iter(leaves))


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterator[Any]:
    """The leaves of ``tree``, one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = _node_def(tree).flatten_fn(tree)  # type: ignore[union-attr]
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in order."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The structure of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree`` with ``func`` applied to each leaf (with the matching leaves of ``rests``)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Call ``func`` on each leaf for its effect; returns ``tree``."""
    others = [tree_leaves(r, is_leaf) for r in rests]
    for xs in zip(tree_leaves(tree, is_leaf), *others):
        func(*xs)
    return tree


def _only(types: type | tuple[type, ...], func: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda x: func(x) if isinstance(x, types) else x


def tree_map_only(type_or_types: type | tuple[type, ...], func: Callable[..., Any], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree`` with ``func`` applied to the leaves of the given types, the rest kept."""
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types: type | tuple[type, ...], pred: Callable[[Any], bool],
                  tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for every leaf of the given types."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types: type | tuple[type, ...], pred: Callable[[Any], bool],
                  tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for some leaf of the given types."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _flatten_with_path(tree: PyTree, path: tuple[Any, ...], out: list[tuple[Any, Any]],
                       is_leaf: Callable[[PyTree], bool] | None) -> None:
    node = None if (is_leaf is not None and is_leaf(tree)) else _node_def(tree)
    if node is None:
        out.append((path, tree))
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"cannot flatten {node.type.__name__} with keys: it was registered "
                         "without flatten_with_keys_fn")
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        _flatten_with_path(child, (*path, key), out, is_leaf)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], TreeSpec]:
    """Like :func:`tree_flatten`, each leaf paired with its key path."""
    out: list[tuple[Any, Any]] = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)
