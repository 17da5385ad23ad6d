"""Plans and what they see: parsing the model's plan, DAG scheduling, request-level settings, the context
each step gets of earlier results, a conversation's bounded memory, the tools' deterministic adjustments,
and what to tell a planner that writes SQL into Cypher. Pure functions, safe in workflow
code."""
