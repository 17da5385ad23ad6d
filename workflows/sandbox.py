"""The workflow sandbox every worker and replayer uses: Temporal's defaults, plus `cryptography` passed
through. Its Rust extension cannot be loaded a second time in one process (the sandbox re-imports what it
does not pass through, and the process aborts), and signature checks in the override validator use it."""

from __future__ import annotations

from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

WORKFLOW_RUNNER = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules("cryptography")
)
