"""The domain's actions: the ontology, the action planner's intent, target selection, the scope check of
a plan against the request, parameter values, and the atomic write queries. Pure functions; executing
them belongs in activities/actions.py."""
