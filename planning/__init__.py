"""Plans and what they see: parsing the model's plan, DAG scheduling, request-level settings, the context
each step gets of earlier results, and a conversation's bounded memory. Pure functions, safe in workflow
code."""
