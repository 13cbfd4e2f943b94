"""Walking a statement's parse tree as pglast gives it: every node below a node, the functions a
subtree calls, whether it reads a column. The Citus rules (tenants/citus_routing.py) read
statements through these."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pglast import ast as _pglast_ast

# pglast types every node attribute as optional; the nodes are handled as Any (see citus_routing).
ast: Any = _pglast_ast


def children(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple | list):
        for item in node:
            yield from children(item) if isinstance(item, tuple | list) else [item]
        return
    if not isinstance(node, ast.Node):
        return
    for name in type(node).__slots__:
        value = getattr(node, name, None)
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, tuple | list):
            yield from (v for v in flatten(value) if isinstance(v, ast.Node))


def flatten(values: Any) -> Iterator[Any]:
    for value in values:
        if isinstance(value, tuple | list):
            yield from flatten(value)
        else:
            yield value


def walk(node: Any) -> Iterator[Any]:
    stack = list(children(node)) if isinstance(node, tuple | list) else [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def function_name(node: Any) -> str | None:
    if isinstance(node, ast.FuncCall):
        return str(node.funcname[-1].sval)
    if isinstance(node, ast.SQLValueFunction):
        return node.op.name.removeprefix("SVFOP_").lower()
    return None


def functions_in(node: Any, names: frozenset[str]) -> list[str]:
    if node is None:
        return []
    found = []
    for child in walk(node if not isinstance(node, tuple | list) else list(node)):
        name = function_name(child)
        if name is not None and name in names:
            found.append(name)
    return sorted(set(found))


def has_column(node: Any) -> bool:
    return any(isinstance(child, ast.ColumnRef) for child in walk(node))
