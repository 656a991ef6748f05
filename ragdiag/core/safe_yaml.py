"""YAML read with limits: PyYAML's safe loader, refusing recursive aliases and alias bombs before building.

``yaml.safe_load`` runs no code, but it builds whatever the aliases say: a
1 KB "billion laughs" (nine levels of nine aliases) expands to 387 million
strings, and ``a: &a [*a]`` builds a list holding itself, which every walk over
it then follows forever. :func:`load_yaml` composes the node graph first and
measures it: a cycle, more than ``max_nodes`` nodes once aliases are expanded,
or a nesting deeper than ``max_depth`` is a :class:`YamlLimitError`
(a ``ValueError``) naming the line, before any object is made.
"""

from __future__ import annotations

__all__ = ["YamlLimitError", "load_yaml", "limited_loader", "MAX_NODES", "MAX_DEPTH"]

MAX_NODES = 1_000_000  # nodes once every alias is expanded (a large ground truth has a few hundred thousand)
MAX_DEPTH = 200  # levels of nesting


class YamlLimitError(ValueError):
    """A YAML document over a limit (recursive, an alias bomb, too deep); one line naming where."""


def _measure(root, max_nodes: int, max_depth: int) -> None:
    """Walk the node graph of ``root`` once per distinct node (sizes memoised): a cycle, size or depth over a limit
    raises :class:`YamlLimitError`."""
    from yaml.nodes import MappingNode, SequenceNode

    size: dict[int, int] = {}
    open_: set[int] = set()
    # iterative post-order walk: (node, depth, children pending?)
    stack: list[tuple[object, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        if done:
            open_.discard(key)
            total = 1 + sum(size[id(c)] for c in children)
            if total > max_nodes:
                raise YamlLimitError(f"line {node.start_mark.line + 1}: its aliases expand to over {max_nodes} "
                                     "values (an alias bomb); write the values out")
            size[key] = total
            continue
        if key in size:
            continue
        if depth > max_depth:
            raise YamlLimitError(f"line {node.start_mark.line + 1}: nested over {max_depth} levels deep")
        open_.add(key)
        stack.append((node, depth, True))
        for child in children:
            if id(child) in open_:
                raise YamlLimitError(f"line {child.start_mark.line + 1}: an alias refers to a value that holds it "
                                     "(a recursive alias)")
            if id(child) not in size:
                stack.append((child, depth + 1, False))


def limited_loader(base=None, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH):
    """A subclass of ``base`` (default ``yaml.SafeLoader``) that measures each document before building it."""
    import yaml

    base = base or yaml.SafeLoader

    class Limited(base):
        def get_single_data(self):
            node = self.get_single_node()
            if node is None:
                return None
            _measure(node, max_nodes, max_depth)
            return self.construct_document(node)

    return Limited


def load_yaml(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH):
    """The one document of ``text``, safely loaded within the limits (:class:`YamlLimitError` over one).

    >>> load_yaml("a: &x [1, 2]\\nb: *x\\n")
    {'a': [1, 2], 'b': [1, 2]}
    >>> load_yaml("a: &a [*a]")
    Traceback (most recent call last):
    ...
    ragdiag.core.safe_yaml.YamlLimitError: line 1: an alias refers to a value that holds it (a recursive alias)
    """
    import yaml

    return yaml.load(text, Loader=limited_loader(max_nodes=max_nodes, max_depth=max_depth))  # noqa: S506 - safe
