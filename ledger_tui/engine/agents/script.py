"""Scripted conversations: a JSON file of customer messages and agent turns, run through the real
loop, gate and environment.

    {"domain": "airline", "title": "…", "description": "…", "task": "<optional task id>",
     "turns": [
       {"customer": "Hi, I'm mia_li_3668 …"},
       {"helpers": {"constraints": "- …", "tools": "- get_user_details: …"}},
       {"agent": {"text": "", "calls": [{"name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}}]}},
       {"agent": {"text": "… Shall I proceed?"}},
       {"customer": "Yes, please."},
       {"customer_action": {"name": "toggle_roaming", "arguments": {}}},
       {"operator": {"name": "get_reservation_details", "arguments": {"reservation_id": "ZFA04Y"}}}
     ]}

A customer message starts an agent turn; each agent item is one model turn; a turn with only text
ends the agent's turn. After a REVISE the next agent item is the model's retry; after a BLOCK the
turn ends with the engine's refusal. `customer_action` is the customer acting on their own device
(dual-control domains); `operator` is a call typed by the operator, gated like the agent's.

`"mode"` picks the session's mode (default `full`; `run --mode` overrides it). `"consent"` picks how
consent is observed in a gated mode: `"text"` (the default) reads it from the conversation; with
`"card"` a write that passes every other check is held and the system shows the customer a card,
which the next `customer` turn answers. In mode `irma` each
customer turn is followed by a `helpers` item: the answers of IRMA's two helper calls (the
constraints checklist and the tool suggestions) before the agent's turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledger_tui.engine.errors import ScriptError
from ledger_tui.engine.events import Event, Notice, ToolCall
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.store.reading import parse_json, read_text, words
from ledger_tui.engine.session import Session


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptCall(_Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class AgentTurn(_Strict):
    text: str = ""
    calls: list[ScriptCall] = Field(default_factory=list)


class CustomerItem(_Strict):
    customer: str


class AgentItem(_Strict):
    agent: AgentTurn


class CustomerActionItem(_Strict):
    customer_action: ScriptCall


class OperatorItem(_Strict):
    operator: ScriptCall


class HelperAnswers(_Strict):
    constraints: str
    tools: str


class HelpersItem(_Strict):
    helpers: HelperAnswers


Item = Union[CustomerItem, AgentItem, CustomerActionItem, OperatorItem, HelpersItem]


class Script(_Strict):
    domain: str
    title: str = ""
    description: str = ""
    mode: str | None = None
    # how consent is observed in a gated mode: "text" (the default, as every script was written
    # before cards) or "card" (the system asks; the next customer turn answers the card)
    consent: str | None = None
    task: str | None = None  # start from this task's initial state (e.g. telecom's phone set-up)
    turns: list[Item]


def load_script(path: Path | str) -> Script:
    """A script file, or one sentence (ScriptError) naming the file, the turn or field and what is
    wrong: missing, a folder, not UTF-8, over the size limit, not JSON, nested too deeply, or a
    field of the wrong shape."""
    path = Path(path)
    fix = "see the README's script format"
    text = read_text(path, ScriptError, fix, missing=f"Script file {path} does not exist; check --script, or name a shipped script (`ledger-tui examples` lists them).")
    data = parse_json(text, ScriptError, f"Script {path.name}", "fix the file")
    if not isinstance(data, dict) or "turns" not in data or "domain" not in data:
        raise ScriptError(f"Script {path.name} needs an object with \"domain\" and \"turns\"; {fix}.")
    if not isinstance(data["turns"], list):
        raise ScriptError(f"Script {path.name}: \"turns\" should be a list of turns; {fix}.")
    kinds: dict[str, type[BaseModel]] = {
        "customer": CustomerItem, "agent": AgentItem, "customer_action": CustomerActionItem, "operator": OperatorItem,
        "helpers": HelpersItem,
    }
    for i, item in enumerate(data["turns"]):
        keys = set(item) if isinstance(item, dict) else set()
        if len(keys) != 1 or not keys <= set(kinds):
            present = sorted(str(k)[:40] for k in keys)[:5]
            raise ScriptError(
                f"Turn {i + 1} of {path.name} must have exactly one of \"customer\", \"agent\", "
                f"\"customer_action\", \"operator\" or \"helpers\" (it has {present or 'none'})."
            )
        (key,) = keys
        try:
            kinds[key].model_validate(item)
        except ValidationError as exc:
            raise ScriptError(f"Turn {i + 1} of {path.name} ({key}) is malformed: {words(exc)}; {fix}.") from None
        if key == "helpers" and (i == 0 or set(data["turns"][i - 1]) != {"customer"}):
            raise ScriptError(f"Turn {i + 1} of {path.name} (helpers) must come right after a customer turn: it answers IRMA's helper calls on that message.")
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(f"Script {path.name} is malformed: {words(exc)}; {fix}.") from None


def _turn(item: AgentItem, index: int) -> ModelTurn:
    calls = tuple(
        ToolCall(id=c.id or f"call_{index}_{j}", name=c.name, arguments=c.arguments)
        for j, c in enumerate(item.agent.calls)
    )
    return ModelTurn(text=item.agent.text, tool_calls=calls)


def script_mode(script: Script, mode: str | None) -> str:
    """The session's mode: `mode` when given (the CLI's --mode), else the script's, else full."""
    return mode or script.mode or "full"


def script_consent(script: Script, consent: str | None) -> str:
    """How the session observes consent: `consent` when given (the CLI's --consent), else the
    script's, else text (every script written before cards reproduces its session)."""
    return consent or script.consent or "text"


async def run_script(session: Session, script: Script, model: ScriptedModel) -> AsyncIterator[Event]:
    """Play `script` through `session` (whose model must be `model`; in mode irma its helper a
    ScriptedModel too). Raises ScriptError when the script and the conversation disagree;
    everything emitted up to then is already recorded."""
    items = script.turns
    irma = session.mode == "irma"
    if any(isinstance(item, HelpersItem) for item in items) and not irma:
        raise ScriptError(f"The script has \"helpers\" turns, which only mode irma uses; run it with --mode irma (the session's mode is {session.mode}).")
    if irma and not isinstance(session.helper, ScriptedModel):
        raise ScriptError("A script in mode irma needs the session's helper to be a scripted model.")
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, (CustomerItem, AgentItem)):
            j = i + 1 if isinstance(item, CustomerItem) else i
            if irma and isinstance(item, CustomerItem):
                answers = items[j] if j < len(items) else None
                if not isinstance(answers, HelpersItem):
                    raise ScriptError(
                        f"Turn {i + 1}: in mode irma a customer turn is followed by a \"helpers\" turn with the answers of "
                        "IRMA's two helper calls ({\"constraints\": …, \"tools\": …}); add one."
                    )
                session.helper.extend([ModelTurn(text=answers.helpers.constraints), ModelTurn(text=answers.helpers.tools)])  # type: ignore[union-attr]
                j += 1
            turns = []
            while j < len(items) and isinstance(items[j], AgentItem):
                turns.append(_turn(items[j], j))  # type: ignore[arg-type]
                j += 1
            model.extend(turns)
            if isinstance(item, CustomerItem):
                stream = session.user_says(item.customer)
            else:
                stream = session.agent_turn()
            async for event in stream:
                yield event
                if isinstance(event, Notice) and event.level == "error":
                    raise ScriptError(f"Turn {i + 1}: {event.text}")
            if model.queue:
                raise ScriptError(
                    f"The agent's turn after script turn {i + 1} ended with {len(model.queue)} scripted agent "
                    f"turn(s) unused (a text-only turn or a BLOCK ends the turn); remove them or add a customer turn."
                )
            i = j
        elif isinstance(item, CustomerActionItem):
            async for event in session.customer_action(item.customer_action.name, item.customer_action.arguments):
                yield event
            i += 1
        else:
            async for event in session.operator_call(item.operator.name, item.operator.arguments):
                yield event
            i += 1
