"""Human decisions: the checks on an override (who, which step, which choice, the sizes), signed
decisions over a per-request challenge, and who may start an action. Pure functions, safe in workflow
code."""
