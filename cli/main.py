"""tg-confidence: the user's CLI.

  up        start the embedded stack (or use external parts), optionally ask one question, serve until Ctrl-C
  down      stop the stack `up` runs, from another terminal (or the parts a killed `up` left running)
  ps        list the stack's parts: pid, state, memory, ports, log
  logs      print a part's log; -f follows it
  ask       send one AgentRequest over Pulsar and print the AgentResponses as they arrive
  override  answer a run that waits for a human: accept, retry [--arguments JSON], skip or abort
  status    show a run's plan, step states, scores and any pending override
  replay    replay a run's history (from Temporal or an exported JSON file) against the current code
  actions   list executed actions (the action history) and undo reversible ones
  calibrate fit the confidence calibrator from labelled runs and the human decisions in the audit trail
  keys      make a key pair for signing override, approval and undo decisions

Every command takes the service's shared flags (-p/--pulsar-host, --temporal-address, --config, ...)
and reads the same configuration as the services: the YAML file, then TGCA_* variables, then flags.
"""

from __future__ import annotations

import argparse
import asyncio

from cli import actions, calibrate, keys, runs, stack_commands
from cli.ask_command import add_parser as add_ask_parser
from cli.ask_command import ask_command
from cli.errors import quiet_broker_log
from cli.up import add_parser as add_up_parser
from cli.up import up
from service.flags import HelpFormatter, add_common_args, entry_parser
from service.lifecycle import exit_now

COMMANDS = {
    "up": up,
    "ask": ask_command,
    "override": runs.override,
    "status": runs.status,
    "replay": runs.replay_command,
    "actions": actions.run,
    "keys": keys.run,
    "calibrate": calibrate.calibrate,
    "down": stack_commands.down,
    "ps": stack_commands.ps,
    "logs": stack_commands.logs,
}


def build_parser() -> argparse.ArgumentParser:
    parser = entry_parser("tg-confidence", __doc__)
    common = argparse.ArgumentParser(add_help=False)
    add_common_args(common)
    sub = parser.add_subparsers(dest="command", required=True)
    add_up_parser(sub, common)
    stack_commands.add_parsers(sub, common)
    add_ask_parser(sub, common)
    runs.add_parsers(sub, common)
    actions.add_parser(sub, common)
    calibrate.add_parser(sub, common)
    keys.add_parser(sub, common)
    for command in sub.choices.values():
        command.formatter_class = HelpFormatter
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    quiet_broker_log(args.log_level)
    exit_now(asyncio.run(COMMANDS[args.command](args)))
