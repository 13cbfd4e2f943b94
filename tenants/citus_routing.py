"""Citus's planner rules applied to one SQL statement, read by PostgreSQL's own parser (pglast).

No Citus build runs here, so what a cluster would refuse or fan out is read from the statement
text (docs/decisions/0120). The rules are the ones Citus's planner applies to a statement that
touches a distributed table (`multi_router_planner.c`, `insert_select_planner.c`):

- routed: every distributed table the statement reads or writes is pinned to one value of its
  distribution column, by an equality with a value (`t.tenant_id = $1`), or by an equality chain
  to a pinned table (`d.tenant_id = c.tenant_id`), outside any OR; an INSERT names the
  distribution column. Otherwise the statement goes to every shard ("unrouted").
- co-located join: two distributed tables in one query level are joined on their distribution
  columns (or each pinned); otherwise Citus repartitions or refuses ("join").
- no VOLATILE function in the WHERE or SET of an UPDATE, nor in the WHERE of a DELETE, on a
  distributed table: "functions used in the WHERE clause of modification queries on distributed
  tables must not be VOLATILE" / "functions used in UPDATE queries ... must not be VOLATILE"
  ("volatile"). A STABLE function given a column, or a non-IMMUTABLE one inside CASE/COALESCE,
  is refused there too ("irreducible").
- only IMMUTABLE functions in `ON CONFLICT ... DO UPDATE SET` (a plain column or EXCLUDED.col is
  fine) and its WHERE, and in RETURNING ("mutable").
- no data-modifying CTE in a statement that touches a distributed table: it is planned apart
  through the coordinator, never routed as one statement ("modifying-cte").

What it cannot see: operators' volatility (`timestamptz + interval` is STABLE, known only with
types), and the values bound to two different placeholders (both pinned counts as routed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pglast import ast as _pglast_ast
from pglast import parse_sql
from pglast.enums import A_Expr_Kind, BoolExprType

from tenants.sqltree import children, function_name, functions_in, has_column, walk

# pglast types every node attribute as optional; the parser fills the ones read here for the node
# kinds they are read on, so the nodes are handled as Any rather than narrowed at each access.
ast: Any = _pglast_ast

# When no catalog is at hand (the checker's own tests): the functions the product could plausibly
# put in a statement, by their pg_proc volatility.
VOLATILE_FUNCTIONS = frozenset({
    "clock_timestamp", "timeofday", "random", "random_normal", "setseed", "nextval", "setval",
    "gen_random_uuid", "uuidv4", "uuidv7", "txid_current", "pg_advisory_lock", "pg_try_advisory_lock",
    "pg_advisory_xact_lock", "pg_try_advisory_xact_lock", "pg_sleep", "pg_notify", "set_config",
})
# CURRENT_TIMESTAMP and its kin parse as SQLValueFunction, not as calls; all are STABLE.
SQL_VALUE_FUNCTIONS = frozenset({
    "current_date", "current_time", "current_time_n", "current_timestamp", "current_timestamp_n",
    "localtime", "localtime_n", "localtimestamp", "localtimestamp_n",
})
STABLE_FUNCTIONS = SQL_VALUE_FUNCTIONS | frozenset({
    "now", "statement_timestamp", "transaction_timestamp", "current_setting", "to_char", "age",
    "current_date", "localtimestamp", "to_timestamp", "date_trunc", "timezone",
})


@dataclass(frozen=True)
class Catalog:
    """What the rules need to know of the database: distributed tables and function volatility."""

    distribution: Mapping[str, str]  # distributed table -> its distribution column
    volatile: frozenset[str] = VOLATILE_FUNCTIONS  # names VOLATILE in every overload
    mutable: frozenset[str] = VOLATILE_FUNCTIONS | STABLE_FUNCTIONS  # names not IMMUTABLE in every overload


@dataclass(frozen=True)
class Finding:
    rule: str  # unrouted, join, volatile, irreducible, mutable, modifying-cte, unparsed
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


def relations(statement: str) -> set[str]:
    """Every table name the statement mentions (CTE names included when they shadow none)."""
    try:
        tree = parse_sql(statement)
    except Exception:  # noqa: BLE001 - an unparsable statement touches nothing we can name
        return set()
    return {node.relname for node in walk(tree) if isinstance(node, ast.RangeVar) and node.relname}


def findings(*, statement: str, catalog: Catalog) -> list[Finding]:
    """What Citus would refuse or fan out in `statement`; [] when it touches no distributed table."""
    try:
        tree = parse_sql(statement)
    except Exception as error:  # noqa: BLE001 - pglast raises its own ParseError, and a few others
        return [Finding("unparsed", f"{type(error).__name__}: {error}")]
    found: list[Finding] = []
    for raw in tree:
        found += _statement_findings(raw.stmt, catalog)
    return list(dict.fromkeys(found))


# --- statement-level rules ------------------------------------------------------------------------
def _target(stmt: Any) -> str | None:
    relation = getattr(stmt, "relation", None)
    return relation.relname if isinstance(relation, ast.RangeVar) else None


def _statement_findings(stmt: Any, catalog: Catalog) -> list[Finding]:
    touched = {node.relname for node in walk(stmt) if isinstance(node, ast.RangeVar)}
    distributed = touched & set(catalog.distribution)
    if not distributed:
        return []
    found: list[Finding] = []
    for node in walk(stmt):
        if isinstance(node, ast.CommonTableExpr) and isinstance(
                node.ctequery, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt | ast.MergeStmt):
            found.append(Finding("modifying-cte", f"WITH {node.ctename} AS ({type(node.ctequery).__name__[:-4]}"
                                 " ...): planned apart, through the coordinator"))
        if isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt) and _target(node) in distributed:
            found += _modification_findings(node, catalog)
    if isinstance(stmt, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
        found += _Router(catalog).run(stmt)
    elif isinstance(stmt, ast.CopyStmt):
        found += _copy_findings(stmt, catalog)
    return found


def _modification_findings(node: Any, catalog: Catalog) -> list[Finding]:
    table = _target(node)
    found: list[Finding] = []
    where = getattr(node, "whereClause", None)
    if isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
        kind = "UPDATE" if isinstance(node, ast.UpdateStmt) else "DELETE"
        if names := functions_in(where, catalog.volatile):
            found.append(Finding("volatile", f"{kind} {table}: VOLATILE {', '.join(names)} in WHERE"))
        sets = [t.val for t in node.targetList or ()] if isinstance(node, ast.UpdateStmt) else []
        if names := functions_in(sets, catalog.volatile):
            found.append(Finding("volatile", f"UPDATE {table}: VOLATILE {', '.join(names)} in SET"))
        for expression in [where, *sets]:
            found += _irreducible(expression, table, catalog)
    if isinstance(node, ast.InsertStmt) and node.onConflictClause is not None:
        clause = node.onConflictClause
        for target in clause.targetList or ():
            if not isinstance(target.val, ast.ColumnRef) and (names := functions_in(target.val, catalog.mutable)):
                found.append(Finding("mutable", f"INSERT {table} ON CONFLICT DO UPDATE SET {target.name} = "
                                     f"{', '.join(names)}(): must be IMMUTABLE"))
        where_names = functions_in(clause.whereClause, catalog.mutable)
        if clause.infer is not None:
            where_names += functions_in(clause.infer.whereClause, catalog.mutable)
        if where_names:
            found.append(Finding("mutable", f"INSERT {table} ON CONFLICT ... WHERE {', '.join(where_names)}(): "
                                 "must be IMMUTABLE"))
    returning = getattr(node, "returningClause", None)
    if returning is not None and (names := functions_in(returning.exprs, catalog.mutable)):
        found.append(Finding("mutable", f"{type(node).__name__[:-4].upper()} {table} RETURNING "
                             f"{', '.join(names)}(): must be IMMUTABLE"))
    return found


def _irreducible(expression: Any, table: str | None, catalog: Catalog) -> list[Finding]:
    """STABLE functions are evaluated once on the coordinator; given a column they cannot be."""
    if expression is None:
        return []
    found = []
    for node in walk(expression):
        name = function_name(node)
        if name in catalog.mutable and name not in catalog.volatile and isinstance(node, ast.FuncCall) and \
                any(has_column(arg) for arg in node.args or ()):
            found.append(Finding("irreducible", f"{table}: STABLE {name}() given a column"))
        if isinstance(node, ast.CoalesceExpr | ast.CaseExpr) and functions_in(node, catalog.mutable):
            found.append(Finding("irreducible", f"{table}: non-IMMUTABLE function inside CASE/COALESCE"))
    return found


def _copy_findings(stmt: Any, catalog: Catalog) -> list[Finding]:
    table = _target(stmt)
    if table is None or table not in catalog.distribution:
        return []
    column = catalog.distribution[table]
    names = [a.sval for a in stmt.attlist or ()]
    if stmt.is_from and names and column not in names:
        return [Finding("unrouted", f"COPY {table} FROM without {column}")]
    if not stmt.is_from:
        return [Finding("unrouted", f"COPY {table} TO: every shard")]
    return []


# --- routing: which distributed tables are pinned to one distribution value --------------------
@dataclass
class _Scope:
    parent: _Scope | None
    tables: dict[str, str] = field(default_factory=dict)  # alias -> distributed table
    derived: dict[str, dict[str, Any]] = field(default_factory=dict)  # subquery alias -> column -> term
    uses: list[tuple[str, str]] = field(default_factory=list)  # (alias, table) in FROM order


_VALUE = ("value",)


class _Router:
    """Union-find over the distribution columns of every table occurrence and the values they are
    equated with; a table is routed when its class holds a value."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.parent: dict[Any, Any] = {}
        self.joined: dict[Any, Any] = {}  # the same, with column = column equalities only
        self.occurrences: list[tuple[Any, str]] = []  # (term, table)
        self.levels: list[list[tuple[Any, str]]] = []  # distributed tables per query level
        self.ctes: dict[str, dict[str, Any]] = {}
        self.found: list[Finding] = []

    # union-find
    def _find(self, sets: dict[Any, Any], item: Any) -> Any:
        sets.setdefault(item, item)
        while sets[item] != item:
            sets[item] = sets[sets[item]]
            item = sets[item]
        return item

    def _union(self, a: Any, b: Any) -> None:
        if a is None or b is None:
            return
        self.parent[self._find(self.parent, a)] = self._find(self.parent, b)
        if a[0] == "column" and b[0] == "column":
            self.joined[self._find(self.joined, a)] = self._find(self.joined, b)

    def run(self, stmt: Any) -> list[Finding]:
        self._statement(stmt, None)
        pinned_roots = {self._find(self.parent, t) for t in self.parent if t[0] == "value"}
        for term, table in self.occurrences:
            if self._find(self.parent, term) not in pinned_roots:
                self.found.append(Finding("unrouted", f"{table} not pinned to one "
                                                      f"{self.catalog.distribution[table]}: every shard"))
        for level in self.levels:
            loose = [(t, n) for t, n in level if self._find(self.parent, t) not in pinned_roots]
            if len(level) > 1 and loose:
                roots = {self._find(self.joined, t) for t, _ in level}
                if len(roots) > 1:
                    names = sorted(n for _, n in level)
                    self.found.append(Finding("join", f"{' x '.join(names)} not joined on their distribution "
                                                      "columns"))
        return self.found

    def _statement(self, stmt: Any, parent: _Scope | None) -> _Scope | None:
        if isinstance(stmt, ast.SelectStmt):
            return self._select(stmt, parent)
        if isinstance(stmt, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            return self._modification(stmt, parent)
        return None

    def _with(self, clause: Any, parent: _Scope | None) -> None:
        for cte in (clause.ctes if clause is not None else ()) or ():
            inner = self._statement(cte.ctequery, parent)
            self.ctes[cte.ctename] = self._outputs(cte.ctequery, inner)

    def _outputs(self, stmt: Any, scope: _Scope | None) -> dict[str, Any]:
        """Output column name -> term, for the simple `alias.col` outputs of a subquery or CTE."""
        targets = getattr(stmt, "targetList", None) or getattr(getattr(stmt, "returningClause", None),
                                                                "exprs", None) or ()
        outputs: dict[str, Any] = {}
        if scope is None:
            return outputs
        for target in targets:
            if isinstance(target.val, ast.ColumnRef):
                name = target.name or _column_name(target.val)
                term = self._term(target.val, scope)
                if name and term is not None:
                    outputs[name] = term
        return outputs

    def _select(self, stmt: Any, parent: _Scope | None) -> _Scope:
        scope = _Scope(parent=parent)
        self._with(stmt.withClause, parent)
        if stmt.op and stmt.op.name != "SETOP_NONE":
            self._statement(stmt.larg, parent)
            self._statement(stmt.rarg, parent)
            return scope
        for item in stmt.fromClause or ():
            self._from(item, scope)
        for values in stmt.valuesLists or ():
            self._expressions(values, scope)
        self._equalities(stmt.whereClause, scope)
        for name in ("targetList", "whereClause", "havingClause", "sortClause", "groupClause", "limitCount"):
            self._expressions(getattr(stmt, name), scope)
        self._level(scope)
        return scope

    def _modification(self, stmt: Any, parent: _Scope | None) -> _Scope:
        scope = _Scope(parent=parent)
        self._with(stmt.withClause, parent)
        table = _target(stmt) or ""
        alias: str = stmt.relation.alias.aliasname if stmt.relation.alias else table
        if isinstance(stmt, ast.InsertStmt):
            self._insert(stmt, scope, table, alias)
            return scope
        self._relation(alias, table, scope)
        extra = stmt.fromClause if isinstance(stmt, ast.UpdateStmt) else stmt.usingClause
        for item in extra or ():
            self._from(item, scope)
        self._equalities(stmt.whereClause, scope)
        self._expressions(stmt.whereClause, scope)
        self._expressions([t.val for t in stmt.targetList or ()] if isinstance(stmt, ast.UpdateStmt) else None,
                          scope)
        self._level(scope)
        return scope

    def _insert(self, stmt: Any, scope: _Scope, table: str, alias: str) -> None:
        column = self.catalog.distribution.get(table)
        select = stmt.selectStmt
        inner = self._statement(select, scope.parent) if select is not None else None
        if column is None:
            return
        names = [c.name for c in stmt.cols or ()]
        if column not in names:
            self.found.append(Finding("unrouted", f"INSERT {table} without {column}"))
            return
        term = ("column", id(scope), alias)
        self.occurrences.append((term, table))
        position = names.index(column)
        if select is None:
            return
        rows = select.valuesLists or ()
        if rows:
            if all(self._value(row[position]) for row in rows):
                self._union(term, _VALUE)
            return
        if not {n.relname for n in walk(select) if isinstance(n, ast.RangeVar)} & set(self.catalog.distribution):
            # Rows the client sent (Django's bulk_create: SELECT * FROM UNNEST(arrays)): the
            # coordinator evaluates the SELECT and sends each row to its tenant's shard, as for VALUES.
            self._union(term, _VALUE)
            return
        targets = select.targetList or ()
        if inner is not None and position < len(targets):
            expression = targets[position].val
            self._union(term, _VALUE if self._value(expression) else self._term(expression, inner))

    def _relation(self, alias: str, table: str, scope: _Scope) -> None:
        if table in self.catalog.distribution:
            scope.tables[alias] = table
            scope.uses.append((alias, table))
            self.occurrences.append((("column", id(scope), alias), table))

    def _from(self, item: Any, scope: _Scope) -> None:
        if isinstance(item, ast.RangeVar):
            alias = item.alias.aliasname if item.alias else item.relname
            if item.relname in self.ctes and not item.schemaname:
                scope.derived[alias] = self.ctes[item.relname]
            else:
                self._relation(alias, item.relname, scope)
        elif isinstance(item, ast.JoinExpr):
            self._from(item.larg, scope)
            self._from(item.rarg, scope)
            self._equalities(item.quals, scope)
            self._expressions(item.quals, scope)
            for name in item.usingClause or ():
                terms = [self._term(ast.ColumnRef(fields=(ast.String(sval=a), ast.String(sval=name.sval))), scope)
                         for a in _aliases(item.larg) + _aliases(item.rarg)]
                terms = [t for t in terms if t is not None]
                for a, b in zip(terms, terms[1:]):
                    self._union(a, b)
        elif isinstance(item, ast.RangeSubselect):
            inner = self._statement(item.subquery, scope)
            if item.alias is not None:
                scope.derived[item.alias.aliasname] = self._outputs(item.subquery, inner)
        elif isinstance(item, ast.RangeFunction):
            self._expressions(item.functions, scope)

    def _expressions(self, node: Any, scope: _Scope) -> None:
        """Subqueries inside expressions are query levels of their own, seeing this one's tables."""
        if node is None:
            return
        stack = list(children(node)) if isinstance(node, tuple | list) else [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.SelectStmt):
                self._statement(current, scope)
                continue
            stack.extend(children(current))

    def _level(self, scope: _Scope) -> None:
        if scope.uses:
            self.levels.append([(("column", id(scope), alias), table) for alias, table in scope.uses])

    def _equalities(self, where: Any, scope: _Scope) -> None:
        for left, right in _conjunct_equalities(where):
            a = _VALUE if self._value(left) else self._term(left, scope)
            b = _VALUE if self._value(right) else self._term(right, scope)
            if a is not None and b is not None and not (a == _VALUE and b == _VALUE):
                self._union(a, b)

    def _value(self, node: Any) -> bool:
        """One value known before planning: a constant, a parameter, an expression of those."""
        return not any(isinstance(n, ast.ColumnRef | ast.SubLink | ast.SelectStmt) for n in walk(node)) and \
            not functions_in(node, self.catalog.volatile)

    def _term(self, node: Any, scope: _Scope | None) -> Any:
        while isinstance(node, ast.TypeCast):
            node = node.arg
        if not isinstance(node, ast.ColumnRef) or isinstance(node.fields[-1], ast.A_Star):
            return None
        names = [f.sval for f in node.fields]
        column, qualifier = names[-1], (names[-2] if len(names) > 1 else None)
        while scope is not None:
            if qualifier is not None:
                table = scope.tables.get(qualifier)
                if table is not None:
                    return ("column", id(scope), qualifier) if self.catalog.distribution[table] == column else None
                if qualifier in scope.derived:
                    return scope.derived[qualifier].get(column)
            else:
                matches = [a for a, t in scope.tables.items() if self.catalog.distribution[t] == column]
                derived = [d[column] for d in scope.derived.values() if column in d]
                if len(matches) == 1:
                    return ("column", id(scope), matches[0])
                if derived:
                    return derived[0]
            scope = scope.parent
        return None


def _column_name(node: Any) -> str | None:
    last = node.fields[-1]
    return last.sval if isinstance(last, ast.String) else None


def _aliases(item: Any) -> list[str]:
    if isinstance(item, ast.RangeVar):
        return [item.alias.aliasname if item.alias else item.relname]
    if isinstance(item, ast.JoinExpr):
        return _aliases(item.larg) + _aliases(item.rarg)
    if isinstance(item, ast.RangeSubselect) and item.alias is not None:
        return [item.alias.aliasname]
    return []


def _conjunct_equalities(node: Any) -> Iterator[tuple[Any, Any]]:
    """(left, right) of every equality that holds for the whole qual: under AND only, never OR/NOT."""
    if node is None:
        return
    if isinstance(node, ast.BoolExpr):
        if node.boolop == BoolExprType.AND_EXPR:
            for arg in node.args:
                yield from _conjunct_equalities(arg)
        return
    if not isinstance(node, ast.A_Expr):
        return
    operator = node.name[-1].sval if node.name else None
    if operator != "=":
        return
    if node.kind in (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_NOT_DISTINCT):
        left, right = node.lexpr, node.rexpr
        if isinstance(left, ast.RowExpr) and isinstance(right, ast.RowExpr) and \
                len(left.args or ()) == len(right.args or ()):
            yield from zip(left.args, right.args)
        else:
            yield left, right
    elif node.kind == A_Expr_Kind.AEXPR_IN and isinstance(node.rexpr, tuple | list) and len(node.rexpr) == 1:
        yield node.lexpr, node.rexpr[0]
