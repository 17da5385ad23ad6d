"""The contracts between the parts: names, payload types and wire models, grouped by what they are for.

Pure data (pydantic models, enums, constants), safe to import anywhere, the workflow sandbox included:

- names.py       workflow and activity names, task queues, search attributes, workflow ids
- wire.py        TrustGraph's AgentRequest / AgentResponse (what travels on Pulsar) and its codec (wire_codec.py)
- topics.py      TrustGraph's topic naming
- plan.py        execution plans, steps, step results and their confidence
- run.py         one run: its settings, input, result and the `status` query's answer
- override.py    the human override: the request a run makes and the decision a human sends
- query_path.py  the inputs and outputs of the planning, tool, repair and synthesis activities
- routing.py     the router's intent (QUERY / ACTION / ANSWER)
- action_path.py the action path: intent, targets, dry run, batch windows, outcomes and progress events
- records.py     what a finished run leaves behind: metrics and the audit record
"""
