"""Which entities an action intent names, for the resolve_action_targets activity (activities/actions.py): by
id, through a related entity (by its name, or by conditions on it) or by property filters alone, narrowed by
the intent's own filters, in parameterised read-only queries (actions/targets.py). Each way says how sure it
is: a broad selection is held below approval, so a human confirms it."""

from __future__ import annotations

from actions.ontology import Ontology, UnknownName
from actions.targets import targets_by_id_query, targets_query
from actions.values import check_filters
from backends.graph_store import GraphQueryError, GraphStore
from contracts.action_path import (
    ActionIntent,
    ActionTarget,
    PropertyFilter,
    ResolveTargetsInput,
    TargetsOutput,
    filters_text,
)

FILTERS_ONLY_CONFIDENCE = 0.85  # below the default approval threshold (0.9): see TargetResolver._by_filters


class TargetResolver:
    def __init__(self, graph: GraphStore, ontology: Ontology) -> None:
        self.graph = graph
        self.ontology = ontology

    async def resolve(self, request: ResolveTargetsInput) -> TargetsOutput:
        """The entities the intent names, at most `max_targets`; an error for an intent that names none, or
        names them with unknown names or values."""
        intent = request.intent
        try:
            self.ontology.require_class(intent.entity_type)
            filters, problems = check_filters(self.ontology, intent.entity_type, intent.filters)
            if problems:
                return TargetsOutput(error="; ".join(problems))
            if intent.entity_ids:
                if len(intent.entity_ids) > request.max_targets:
                    return TargetsOutput(error=f"more than {request.max_targets} entities named; split the request")
                return await self._by_id(intent, filters)
            if intent.related_class:
                related_filters, problems = check_filters(self.ontology, intent.related_class, intent.related_filters)
                if problems:
                    return TargetsOutput(error="; ".join(problems))
                if intent.related_name.strip():
                    return await self._by_relation(intent, filters, related_filters, request.max_targets)
                if related_filters:
                    return await self._by_related_filters(intent, filters, related_filters, request.max_targets)
                return TargetsOutput(error=f"no {intent.related_class} named")
            if filters:
                return await self._by_filters(intent, filters, request.max_targets)
            return TargetsOutput(error="no targets named: give ids, a related entity or property filters")
        except (UnknownName, GraphQueryError) as exc:
            return TargetsOutput(error=str(exc))

    async def _by_id(self, intent: ActionIntent, filters: list[PropertyFilter]) -> TargetsOutput:
        ids = list(dict.fromkeys(intent.entity_ids))
        query, params = targets_by_id_query(self.ontology, intent.entity_type, ids, filters)
        rows = await self.graph.ro_query(query, params, max_rows=len(ids))
        found = {str(k): (str(v), bool(m)) for k, v, m in rows.rows}
        missing = [i for i in ids if i not in found]
        excluded = [i for i in ids if i in found and not found[i][1]]
        targets = [ActionTarget(entity_id=i, entity_name=found[i][0]) for i in ids if i in found and found[i][1]]
        notes = [f"not found: {', '.join(missing[:20])}"] if missing else []
        if excluded:  # named, but the request's own conditions leave them out
            notes.append(f"not matching {filters_text(filters)}: {', '.join(excluded[:20])}")
        reasoning = "; ".join(notes) or "every named id exists" + (
            f" and matches {filters_text(filters)}" if filters else ""
        )
        return TargetsOutput(targets=targets, confidence=0.5 if missing else 0.95, reasoning=reasoning)

    async def _by_relation(
        self, intent: ActionIntent, filters: list[PropertyFilter], related_filters: list[PropertyFilter], limit: int
    ) -> TargetsOutput:
        related = self.ontology.require_class(intent.related_class)
        label, name = intent.related_class, intent.related_name.strip()
        exact = await self.graph.ro_query(
            f"MATCH (x:`{label}`) WHERE toLower(x.`{related.display}`) = toLower($name) OR x.`{related.key}` = $name "
            f"RETURN x.`{related.key}` AS id, x.`{related.display}` AS name",
            {"name": name},
            max_rows=20,
        )
        confidence, how = 0.95, "exact name match"
        matches = exact
        if not exact.rows:
            matches = await self.graph.ro_query(
                f"MATCH (x:`{label}`) WHERE toLower(x.`{related.display}`) CONTAINS toLower($name) "
                f"RETURN x.`{related.key}` AS id, x.`{related.display}` AS name",
                {"name": name},
                max_rows=20,
            )
            confidence, how = 0.7, "partial name match"
        if not matches.rows:
            return TargetsOutput(confidence=0.0, reasoning=f"no {label} named {name!r}")
        if matches.total_rows > 1:
            confidence = min(confidence, 0.5)
            how = f"{matches.total_rows} {label} entities match {name!r}"
        keys = [str(r[0]) for r in matches.rows]
        names = ", ".join(str(r[1]) for r in matches.rows)
        if related_filters:
            names += f" with {filters_text(related_filters)}"
        return await self._related(
            intent, filters, related_filters, limit, keys, f"{label} {names}", confidence, f" ({how})"
        )

    async def _by_related_filters(
        self, intent: ActionIntent, filters: list[PropertyFilter], related_filters: list[PropertyFilter], limit: int
    ) -> TargetsOutput:
        """'Orders of suppliers in Y': through every related entity that matches the related filters."""
        return await self._related(
            intent,
            filters,
            related_filters,
            limit,
            None,
            f"a {intent.related_class} with {filters_text(related_filters)}",
            0.95,
            "",
        )

    async def _related(
        self,
        intent: ActionIntent,
        filters: list[PropertyFilter],
        related_filters: list[PropertyFilter],
        limit: int,
        keys: list[str] | None,
        of: str,
        confidence: float,
        how: str,
    ) -> TargetsOutput:
        query, params = targets_query(
            self.ontology,
            intent.entity_type,
            filters,
            limit,
            intent.related_class,
            keys,
            related_filters,
            intent.related_excluded,
        )
        if intent.related_excluded:  # all but some: as broad as a selection by filters alone
            of, confidence = f"no {of}", min(confidence, FILTERS_ONLY_CONFIDENCE)
        rows = await self.graph.ro_query(query, params, max_rows=limit + 1, timeout_ms=60000)
        where = f" matching {filters_text(filters)}" if filters else ""
        if rows.total_rows > limit:
            return TargetsOutput(
                error=f"more than {limit} {intent.entity_type} entities of {of}{where}; narrow the request"
            )
        targets = [ActionTarget(entity_id=str(k), entity_name=str(v)) for k, v in rows.rows]
        return TargetsOutput(
            targets=targets, confidence=confidence, reasoning=f"{len(targets)} {intent.entity_type} of {of}{where}{how}"
        )

    async def _by_filters(self, intent: ActionIntent, filters: list[PropertyFilter], limit: int) -> TargetsOutput:
        query, params = targets_query(self.ontology, intent.entity_type, filters, limit)
        rows = await self.graph.ro_query(query, params, max_rows=limit + 1, timeout_ms=60000)
        if rows.total_rows > limit:
            return TargetsOutput(
                error=f"more than {limit} {intent.entity_type} entities match "
                f"{filters_text(filters)}; narrow the request"
            )
        targets = [ActionTarget(entity_id=str(k), entity_name=str(v)) for k, v in rows.rows]
        # Exactly what the filters select, but across the whole class: the broadest selection a model can
        # make of a request (a related entity it left out widens it silently), so a human confirms it.
        return TargetsOutput(
            targets=targets,
            confidence=FILTERS_ONLY_CONFIDENCE,
            reasoning=f"{len(targets)} {intent.entity_type} matching {filters_text(filters)} "
            f"(selected by property filters alone)",
        )
