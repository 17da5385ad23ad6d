"""The checks on a human's override decision, and the short form a Pulsar follow-up carries it in."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.override import Decision, Override, OverrideIdentity, OverrideRejected, OverrideRequest, Role
from contracts.run import AgentSettings
from overrides.same_person import comparable, mixes_scripts, same_person
from overrides.signing import sign, signed_message, verify

UNAUTHORIZED = "not authorized"  # how every rejection for want of a right begins (counted apart)
_ROLE_WORDS = {
    Role.REVIEW: "decide on low-confidence steps",
    Role.APPROVE: "approve actions",
    Role.UNDO: "undo actions",
    Role.ACT: "start actions",
}


# The most an override's fields may hold. A decision is a few words: anything longer only grows the run's
# history, its status and its audit record (a multi-megabyte `by` made the status query's answer larger
# than gRPC's 4 MB). `retry` arguments are a step's arguments: a query, a few names.
FIELD_LIMITS = {"step_id": 100, "decision": 16, "by": 200, "reason": 2000, "signature": 200}
MAX_ARGUMENTS = 20
MAX_ARGUMENT_NAME = 100
MAX_ARGUMENT_VALUE = 8000
# Refused override signals listed in a run's status: the most recent, each clipped.
MAX_REJECTIONS_LISTED = 20
MAX_REJECTION_CHARS = 500


def clipped(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a note of its length when it is longer."""
    return text if len(text) <= limit else f"{text[:limit]}…[{len(text)} characters]"


def check_sizes(override: Override) -> None:
    """OverrideRejected if a field is longer than a decision needs; the reason names the field and its limit."""
    for name, limit in FIELD_LIMITS.items():
        length = len(getattr(override, name))
        if length > limit:
            raise OverrideRejected(f"the override's {name} is {length} characters long; at most {limit} are accepted")
    arguments = override.arguments or {}
    if len(arguments) > MAX_ARGUMENTS:
        raise OverrideRejected(f"the override has {len(arguments)} arguments; at most {MAX_ARGUMENTS} are accepted")
    for key, value in arguments.items():
        if len(key) > MAX_ARGUMENT_NAME:
            raise OverrideRejected(
                f"an argument name is {len(key)} characters long; at most {MAX_ARGUMENT_NAME} are accepted"
            )
        if len(value) > MAX_ARGUMENT_VALUE:
            raise OverrideRejected(
                f"argument {clipped(key, 40)!r} is {len(value)} characters long; at most "
                f"{MAX_ARGUMENT_VALUE} are accepted"
            )


def check_override(
    override: Override,
    pending: OverrideRequest | None,
    known_steps: set[str],
    settings: AgentSettings,
    workflow_id: str,
    requester: str,
) -> Decision:
    """The decision if the override is acceptable now; OverrideRejected says why not. Oversized fields are
    refused first. With override_keys configured, the decider must be one of them, hold the role the request
    needs, and have signed this whole decision over the request's challenge. `requester` (the run's
    AgentRequest.user) may not approve its own action unless settings.allow_self_approval."""
    check_sizes(override)
    if settings.override_keys and not any(k.name == override.by for k in settings.override_keys):
        said = f"'{override.by}' is not an identity allowed to decide" if override.by else "no identity given (by)"
        raise OverrideRejected(f"{UNAUTHORIZED}: {said}; sign with a configured key (tg-confidence override --key)")
    if override.step_id not in known_steps:
        raise OverrideRejected(f"unknown step {override.step_id!r}")
    try:
        decision = Decision(override.decision)
    except ValueError:
        raise OverrideRejected(
            f"invalid decision {override.decision!r}; choose one of {', '.join(d.value for d in Decision)}"
        ) from None
    if pending is None or pending.step_id != override.step_id:
        waiting = f"step {pending.step_id} is" if pending else "no step is"
        raise OverrideRejected(f"step {override.step_id} is not awaiting an override ({waiting})")
    if decision is Decision.RETRY and decision.value not in pending.choices and pending.max_human_retries is not None:
        raise OverrideRejected(
            f"retry is no longer a choice for step {pending.step_id}: a human had it retried "
            f"{pending.max_human_retries} time(s), the most this worker allows (max_human_retries); "
            f"choose one of {', '.join(pending.choices)}"
        )
    if decision.value not in pending.choices:
        raise OverrideRejected(f"{decision.value} is not a choice here; choose one of {', '.join(pending.choices)}")
    if override.arguments is not None and decision is not Decision.RETRY:
        raise OverrideRejected("arguments can only be given with the retry decision")
    if not settings.allow_self_approval:
        refuse_self_approval(override, pending, decision, requester)
    if settings.override_keys:
        authorize(override, pending, settings.override_keys, workflow_id)
    return decision


def refuse_self_approval(override: Override, pending: OverrideRequest, decision: Decision, requester: str) -> None:
    """An approval (accept where the role 'approve' is needed) must name a decider other than the requester,
    as people read names (overrides/same_person.py): `Mallory`, or `mallory` with an invisible character or a
    Cyrillic letter, is still Mallory. An unnamed decision counts as the requester's, and so does a name
    mixing scripts: nothing tells them apart. Refusing (skip, abort) stays open to the requester: withdrawing
    one's own request changes nothing. Without identities `by` is only claimed, so this rule is advisory: it
    keeps a requester from approving as itself, not from naming someone else."""
    if pending.role is not Role.APPROVE or decision is not Decision.ACCEPT:
        return
    unnamed, same = not comparable(override.by), same_person(override.by, requester)
    if unnamed or same:
        who = f"'{requester}'" if requester.strip() else "an unnamed requester"
        raise OverrideRejected(
            f"{UNAUTHORIZED}: the requester may not approve its own request ({who}); the "
            "approval must come from someone else, named in `by` (or, where the operator "
            "allows it, agent.allow_self_approval)"
        )
    if mixes_scripts(override.by):
        raise OverrideRejected(
            f"{UNAUTHORIZED}: the requester may not approve its own request, and the approver's "
            f"name {override.by!r} mixes scripts, so nothing tells it from the requester's "
            f"('{requester}'); name the approver in one script"
        )


def authorize(override: Override, pending: OverrideRequest, keys: list[OverrideIdentity], workflow_id: str) -> None:
    """The decider is a configured identity with the role `pending` needs, and signed this very decision."""
    identity = next(k for k in keys if k.name == override.by)  # check_override made sure there is one
    if pending.role not in identity.roles:
        raise OverrideRejected(
            f"{UNAUTHORIZED}: '{identity.name}' may not {_ROLE_WORDS[pending.role]} "
            f"(role '{pending.role.value}' needed)"
        )
    message = decision_message(override, workflow_id, pending.challenge)
    if not override.signature or not verify(identity.public_key, message, override.signature):
        raise OverrideRejected(
            f"{UNAUTHORIZED}: the signature does not sign this decision for this request "
            f"(challenge {pending.challenge!r}); sign it with '{identity.name}'s key"
        )


def decision_message(decision: Override, workflow_id: str, challenge: str) -> bytes:
    """What a decision's signature covers: every field of it but the signature, with the run and the request's
    challenge. Signer and verifier both build it here, so they never drift apart."""
    return signed_message(
        workflow_id,
        challenge,
        decision.step_id,
        decision.decision,
        decision.arguments,
        reason=decision.reason,
        by=decision.by,
    )


def signed_decision(decision: Override, private: Ed25519PrivateKey, workflow_id: str, challenge: str) -> Override:
    """The decision with its signature over the run, the override request's challenge and the whole decision
    (its reason and author included). Set every field before signing: a field changed afterwards voids it."""
    message = decision_message(decision, workflow_id, challenge)
    return decision.model_copy(update={"signature": sign(private, message)})


def parse_pulsar_override(text: str) -> Override:
    """The decision carried by a follow-up AgentRequest (state "override") in its question: a JSON object
    {"step_id": ..., "decision": ..., "arguments"?, "reason"?, "by"?, "signature"?} or the short form
    "<step_id> <decision> [reason ...]"."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return Override.model_validate_json(text)
        except ValueError as exc:
            raise OverrideRejected(f"the override is not a valid JSON decision: {exc}") from exc
    words = text.split()
    if len(words) < 2:
        raise OverrideRejected('an override needs a step id and a decision, e.g. "s1 accept"')
    return Override(step_id=words[0], decision=words[1].lower(), reason=" ".join(words[2:]))


def how_to_answer(workflow_id: str, request: OverrideRequest, signed: bool) -> str:
    """The ways to answer an override request, as the observation that asks for it says them. With signed
    decisions required, the challenge is named, since a caller answering over Pulsar signs over it."""
    step_id = request.step_id
    if signed:
        return (
            f"Decide as an identity with the role '{request.role.value}', signing over challenge "
            f"{request.challenge}. Answer with: tg-confidence override {workflow_id} {step_id} accept --by <name> "
            f"--key <private key> -- or, to answer over Pulsar, sign offline with: tg-confidence override "
            f"{workflow_id} {step_id} accept --by <name> --key <private key> --challenge {request.challenge} "
            f'--print, and send the printed JSON as the question of an AgentRequest with state "override" and '
            f'correlation_id "{workflow_id}"'
        )
    return (
        f"Answer with: tg-confidence override {workflow_id} {step_id} accept -- or: temporal workflow signal "
        f'--workflow-id {workflow_id} --name override --input \'{{"step_id": "{step_id}", "decision": '
        f'"accept"}}\' -- or an AgentRequest with state "override", correlation_id "{workflow_id}" and '
        f'question "{step_id} accept"'
    )


def refusal_reason(cause: BaseException | None) -> str:
    """Why a submit_override update was refused, as the workflow's validator said it (the failure's message,
    without the error type the SDK puts in front of it)."""
    message = getattr(cause, "message", None)
    return str(message if message is not None else cause)


def awaiting_details(workflow_id: str, request: OverrideRequest, what: str, signed: bool = False) -> str:
    """The run's current details while it waits for a human (Temporal markdown, shown by the Web UI and
    `temporal workflow describe`): which step, why, and the commands that answer it."""
    lines = [
        f"**Waiting for a human** on step `{request.step_id}` ({request.function}): {what}",
        f"Confidence {request.score:.2f} against a threshold of {request.threshold:.2f} after {request.retries} "
        f"retries: {request.reasoning}",
        f"Decide within {request.timeout_s:.0f} s ({', '.join(request.choices)}; role `{request.role.value}`):",
    ]
    if signed:
        command = f"tg-confidence override {workflow_id} {request.step_id} accept --by <name> --key <private key>"
        return "\n".join(
            [
                *lines,
                f"- `{command}`",
                f"- over Pulsar: `{command} --challenge {request.challenge} --print`, sent as the question "
                f"of an AgentRequest with state `override` and correlation_id `{workflow_id}`",
            ]
        )
    example = f'{{"step_id": "{request.step_id}", "decision": "accept"}}'
    return "\n".join(
        [
            *lines,
            f"- `tg-confidence override {workflow_id} {request.step_id} accept`",
            f"- `temporal workflow update execute --workflow-id {workflow_id} --name submit_override "
            f"--input '{example}'`",
        ]
    )
