"""Read-only Cypher that selects an action's targets: by id, through related entities, by property
filters, or filters combined with either.

Only names the ontology declares reach the query text (every filter's property is checked here again,
whoever built the intent); ids, keys and filter values are parameters.
"""

from __future__ import annotations

from typing import Any

from actions.ontology import Ontology, UnknownName
from actions.queries import OPS, comparison
from contracts.action_path import PropertyFilter


def filter_conditions(
    ontology: Ontology, class_name: str, filters: list[PropertyFilter], params: dict[str, Any], var: str = "e"
) -> list[str]:
    """One condition per filter on `var`. A missing property fails every op but ne, as in preconditions."""
    conditions = []
    for i, f in enumerate(filters):
        prop = ontology.require_property(class_name, f.property)
        if f.op not in OPS:
            raise UnknownName(f"unknown filter op {f.op!r}")
        name = f"f{i}" if var == "e" else f"{var}f{i}"
        params[name] = f.value
        conditions.append(comparison(prop, f.op, name, var))
    return conditions


def targets_by_id_query(
    ontology: Ontology, class_name: str, ids: list[str], filters: list[PropertyFilter]
) -> tuple[str, dict[str, Any]]:
    """(id, name, matches the filters) for each of `ids` that exists."""
    cls = ontology.require_class(class_name)
    params: dict[str, Any] = {"ids": ids}
    matches = " AND ".join(filter_conditions(ontology, class_name, filters, params)) or "true"
    return (
        f"MATCH (e:`{class_name}`) WHERE e.`{cls.key}` IN $ids "
        f"RETURN e.`{cls.key}` AS id, e.`{cls.display}` AS name, {matches} AS matches"
    ), params


def targets_query(
    ontology: Ontology,
    class_name: str,
    filters: list[PropertyFilter],
    limit: int,
    related_class: str = "",
    related_keys: list[str] | None = None,
    related_filters: list[PropertyFilter] | None = None,
    related_excluded: bool = False,
) -> tuple[str, dict[str, Any]]:
    """(id, name) of the entities that match every filter and, when a related class is given, are related
    to one of its entities that is one of `related_keys` (None: any) and matches every related filter (with
    `related_excluded`: are related to none of them); in id order, at most `limit + 1` (one more tells the
    caller there were more)."""
    cls = ontology.require_class(class_name)
    params: dict[str, Any] = {"limit": limit + 1}
    conditions = filter_conditions(ontology, class_name, filters, params)
    pattern = f"(e:`{class_name}`)"
    if related_class:
        related = ontology.require_class(related_class)
        types = [
            r.type for r in ontology.relationships_of(class_name) if {r.from_, r.to} == {class_name, related_class}
        ]
        if not types:
            raise UnknownName(f"{class_name} is not related to {related_class}")
        hop = f"-[:{'|'.join(f'`{t}`' for t in types)}]-(x:`{related_class}`)"
        related_conditions = filter_conditions(ontology, related_class, related_filters or [], params, "x")
        if related_keys is not None:
            params["keys"] = related_keys
            related_conditions.insert(0, f"x.`{related.key}` IN $keys")
        elif not related_filters:
            raise UnknownName(f"no {related_class} named and no condition on it")
        if related_excluded:  # those related to none of them: count the related ones, keep the zeros
            where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
            return (
                f"MATCH {pattern}{where} OPTIONAL MATCH (e){hop} WHERE {' AND '.join(related_conditions)} "
                f"WITH e, count(x) AS related WHERE related = 0 "
                f"RETURN DISTINCT e.`{cls.key}` AS id, e.`{cls.display}` AS name ORDER BY id LIMIT $limit"
            ), params
        pattern += hop
        conditions[:0] = related_conditions
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return (
        f"MATCH {pattern}{where} RETURN DISTINCT e.`{cls.key}` AS id, e.`{cls.display}` AS name "
        "ORDER BY id LIMIT $limit"
    ), params
