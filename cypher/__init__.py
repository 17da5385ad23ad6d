"""Writing, checking and repairing Cypher without a model: clause order, schema-driven repairs, the
read-only check, row caps and dates stored as text.
Pure functions, safe in workflow code. Running a query belongs in backends/, asking a model in activities/."""
