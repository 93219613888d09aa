"""`AsyncLLMDecision`: asks an LLM what an NPC should do, without ever blocking a frame (a thin node)."""

from __future__ import annotations

import weakref
from typing import Any

from gdbridge import classes, objects
from gdbridge.declare import export, python_only, signal
from gdbridge.types import NodePath, PackedStringArray, StringName
from npc_mind.decision.blackboard import describe_type
from npc_mind.llm.client import DEFAULT_RESPONSE_CAP
from npc_mind.llm.endpoints import URL_ENV
from npc_mind.llm.prompt import examples_from
from npc_mind.server.decisions import DecisionSettings
from npc_mind.utility.selector import MISSING
from npc_mind_godot import live, mistakes
from npc_mind_godot._common import ServerHandle, icon, server


def describe_engine_value(value: Any) -> Any:
    """An engine object in a context as plain data, read now on the main thread: `{"id": instance id,
    "class": class name, "name": node name}` (nodes only have a name). A freed object arrives as
    gdbridge's freed wrapper, which is falsy: it becomes None, so nothing here touches a dead one."""
    if isinstance(value, objects.Object):
        if not value:
            return None
        described: dict[str, Any] = {"id": int(value.get_instance_id()), "class": str(value.get_class())}
        if type(value)._gd_is_node:
            described["name"] = str(value.get_name())
        return described
    return describe_type(value)


class AsyncLLMDecision(ServerHandle, classes.Node, icon=icon("AsyncLLMDecision")):
    """The LLM as an advisor that never freezes the game: an answer in time, or the selector decides.

    `request_decision(context)` sends a frozen snapshot of the context (and the sibling
    MemoryStream's top memories, without waking them) to an OpenAI-compatible endpoint off the main
    thread; results are merged on the main thread by the server, only if still current. Each request
    ends in exactly one signal: `decision_made(intent, urgency, tier)` (tier 1: the answer came
    before `soft_deadline_ms` and is applied whole; tier 2: it came before `hard_deadline_ms` and
    only its intent is used, as a tag for the `fallback_selector`) or `decision_fallback(tier,
    reason)` (tier 3: too slow, an error, no endpoint: the selector decides). `abort()` (a grenade)
    cancels it: no signal at all, and a late answer is discarded and counted. A request made while
    one is pending waits and goes out when that one ends; a request replaced by another in the same
    frame, before it went out, ends as `superseded`.

    The endpoint comes from `endpoint`, else the project setting `npc_mind/llm/endpoint`, else the
    environment (`NPC_MIND_LLM_URL`); API keys only ever come from the environment
    (`NPC_MIND_API_KEY`). Without an endpoint every request is an immediate tier 3 with reason
    `no_endpoint` (said once in the Output when the first decision joins), so a game behaves the
    same, only without the model's advice. With the project setting
    `npc_mind/llm/start_local_model` on and no endpoint, the game starts the bundled local model
    itself (see NpcMindServer).

    **Fallback reasons.** `timeout` (no answer by `hard_deadline_ms`, or an endpoint that trickles
    bytes forever), `connect_error`, `connection_error`, `http_error`, `invalid_json`,
    `invalid_answer` (not a valid decision, or a malformed stream chunk), `too_large` (over
    `max_response_kib` / `max_decoded_kib`), `queue_full` and `shed` (the endpoint is saturated),
    `breaker_open` (the endpoint failed 5 times in a row: requests stop for 5 s, then one probes),
    `no_endpoint`, `choice_collision` (two intents share a first token in `choice` mode),
    `superseded`, `reconfigured`, and two that are bugs, logged with their traceback in the Output:
    `prompt_error` (the prompt could not be made from the context) and `internal_error` (anything
    else that failed while this decision was updated; the other decisions' update goes on). An input
    the `fallback_selector`'s considerations read that the request's context lacks is no bug: it
    reads as its `default_input`, else 0, said once per decision node and key.

    **Under overload.** Many NPCs asking one model is the normal case, not an error. The endpoint is
    sent at most as many requests as it has slots (llama-server's `/props` `total_slots`, else the
    endpoint's configured concurrency); a missed deadline halves that number for the endpoint and
    answers grow it back. The rest wait in one queue, best first: higher `priority`, then the higher
    urgency of the NPC's last tier-1 answer, then the older request. From each endpoint's measured
    service time the queue is sized so that every request taken can be answered by 80% of its
    `hard_deadline_ms`; a request beyond that ends at once, in the frame it was asked:
    `decision_fallback(3, "queue_full")` if it is refused outright, `(3, "shed")` if it was queued
    and a more urgent request took its place or the endpoint slowed down. The circuit breaker opens
    only on the endpoint's own errors (a refused or reset connection, an HTTP error, a read timeout,
    a malformed or oversized response), and on a missed deadline only when the answer had begun and
    then stalled (no data for longer than the endpoint needs by its own record, sent to a free slot
    with that much time left, and no other answer from it meanwhile): an answer not begun is a slow
    model (llama-server sends nothing before the prompt is evaluated; a loaded machine slows every
    answer at once), so a saturated or slowed-down but healthy model never trips it.

    **The context** is copied as plain data when you call `request_decision`: numbers, strings,
    Arrays and Dictionaries of them; an engine object becomes `{"id": instance id, "class": class
    name, "name": node name}`, and one already freed reads as null. So `request_decision({"target":
    enemy})` followed by `enemy.queue_free()` is safe: the prompt (made off the main thread) never
    touches the node.

    **What the model is sent.** One hub per distinct configuration (intents, deadlines,
    `system_prompt`, `examples`, endpoint) serves all its nodes. Its prompt starts with a prefix
    that is the same bytes for every node and request (persona, intents, answer format, then each
    example), which the server caches (the hub warms it at start), and ends with the situation: the
    context's `situation` text first, then its other entries coarsely (one decimal, zeros and values
    of 5 or more digits left out, keys starting with `_` never shown) and the memories by type and
    strength. Keep entity ids out of the context's text. NPCs with equal `system_prompt` and
    `examples` share one cached prefix, so give a whole guard type the same examples.

    **Request modes** belong to the endpoint, not the node: they depend on what the server can do,
    and are declared in the endpoint's URL (`http://127.0.0.1:8080/v1#mode=json`, also in this
    node's `endpoint`) or for every endpoint in `NPC_MIND_LLM_MODE`. On llama-server (detected) the
    default is `choice`, one token chosen among the intents' first tokens, the fastest, with urgency
    0 (intents must start with different tokens: `take_cover` and `take_off` are refused, reason
    `choice_collision`); `json` adds an urgency through a grammar that can never be cut off; other
    servers get `schema`, a JSON schema `response_format`.

    A bad example (an intent not in `allowed_intents`, an urgency outside 0..1, an unknown key, more
    than 8) is a configuration warning in the editor and, when the node joins the server, an error
    naming the entry; the rest of the game goes on. Changing a property at run time applies from the
    next request; a request pending at that moment ends at once with `decision_fallback(3,
    "reconfigured")` (emitted during the assignment).
    """

    _JOINS_IN_READY = True  # the linked selector and memory stream are in the tree by then

    endpoint: str = export(
        "", doc="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1 (empty: default)."
    )
    soft_deadline_ms: int = export(300, range=(1, 60000), doc="Earlier answers: tier 1.")
    hard_deadline_ms: int = export(800, range=(2, 120000), doc="The timeout (tier 3).")
    tag_ttl: float = export(
        10.0, range=(0.0, 3600.0, 0.1), doc="Seconds an intent still steers the selector."
    )
    allowed_intents: PackedStringArray = export(PackedStringArray(["idle"]), doc="What the model may answer.")
    system_prompt: str = export(
        "a guard in a game world", multiline=True, doc="Who the NPC is (<= 400 chars)."
    )
    examples: list[dict] = export(
        [],
        doc='Few-shot answers in the cached prompt, up to 8: {"situation": "a thief runs", "intent": '
        '"pursue", "urgency": 0.9}. NPCs with equal examples share one prefix.',
    )
    fallback_selector: NodePath = export(NodePath(""), doc="The UtilitySelector that covers tiers 2 and 3.")
    memory_stream: NodePath = export(
        NodePath(""), doc="Memories for the prompt (empty: a sibling MemoryStream)."
    )
    max_response_kib: int = export(
        DEFAULT_RESPONSE_CAP >> 10, range=(1, 65536), doc="A longer response is refused (too_large)."
    )
    max_decoded_kib: int = export(
        DEFAULT_RESPONSE_CAP >> 10, range=(1, 65536), doc="Cap after decompression (too_large)."
    )
    priority: int = export(
        0, range=(-100, 100), doc="When the model is saturated, higher goes first; the last are shed."
    )

    _live = live.group()
    live_pending: bool = live.live(False, "A request is out (from request_decision until its signal).")
    live_behavior: StringName = live.live(StringName(""), "What the decision layer chose last.")

    def get_live_pending(self) -> bool:
        handle = live.handle_of(self)
        return bool(server().core.decisions.pending(handle)) if handle else False

    def get_live_behavior(self) -> StringName:
        handle = live.handle_of(self)
        return StringName(server().core.decisions.behavior(handle) if handle else "")

    decision_requested = signal(
        situation=str,
        doc="request_decision was called (by code or an AskDecisionAction): its context's situation "
        '("" when it has none). The request\'s one decision signal follows, unless it is aborted.',
    )
    decision_aborted = signal(doc="abort() was called: the request's decision signal will never come.")
    thinking_started = signal(doc="A request went out: time for a 'let me think...' gesture.")
    decision_made = signal(
        intent=StringName, urgency=float, tier=int, doc="An answer was applied (tier 1 or 2)."
    )
    decision_fallback = signal(
        tier=int, reason=str, doc="No answer was applied (tier 3): the local AI decided."
    )

    @python_only
    def settings(self) -> DecisionSettings:
        intents = tuple(str(intent) for intent in self.allowed_intents)
        return DecisionSettings(
            intents=intents,
            soft_deadline=self.soft_deadline_ms / 1000.0,
            hard_deadline=self.hard_deadline_ms / 1000.0,
            tag_ttl=float(self.tag_ttl),
            persona=str(self.system_prompt)[:400] or "an NPC",
            examples=examples_from(self.examples, intents),
            endpoint=str(self.endpoint),
            max_response_bytes=int(self.max_response_kib) << 10,
            max_decoded_bytes=int(self.max_decoded_kib) << 10,
        )

    def _reconfigure(self, _value: Any) -> None:
        # Settings changed at run time: the next request uses them; one still pending (or not yet
        # sent) ends now, as every request ends in one signal.
        handle = self.__dict__.get("_server_handle", 0)
        if handle:
            pending = server().core.decisions.pending(handle)  # off the main thread: refused here
            del self.__dict__["_server_handle"]
            server().release(handle)
            if pending:
                self.emit_signal(StringName("decision_fallback"), 3, "reconfigured")

    def _reprioritize(self, _value: Any) -> None:
        handle = self.__dict__.get("_server_handle", 0)
        if handle:
            server().core.set_decision_priority(handle, int(self.priority))

    def _linked(self, path: NodePath, class_name: str) -> Any:
        if str(path):
            node = self.get_node_or_null(path)
            return node if node is not None and node.is_class(class_name) else None
        parent = self.get_parent()
        if parent is None:
            return None
        for child in parent.get_children():
            if child.is_class(class_name):
                return child
        return None

    def _handle(self) -> int:
        handle = self.__dict__.get("_server_handle", 0)
        if not handle:
            selector = (
                self._linked(self.fallback_selector, "UtilitySelector")
                if str(self.fallback_selector)
                else None
            )
            memory = self._linked(self.memory_stream, "MemoryStream")
            handle = server().core.add_decision(
                self.settings(),
                fallback_selector=selector.get_server_id() if selector is not None else 0,
                memory=memory.get_server_id() if memory is not None else 0,
                priority=int(self.priority),
                input_defaults=selector.__dict__.get("_input_defaults") if selector is not None else None,
                on_bad_input=_bad_input_reporter(self, selector),
            )
            server().attach(self, handle)
            self.__dict__["_server_handle"] = handle
            if not server().core.decisions.has_endpoint(handle):
                _say_no_endpoint(self)
        return handle

    def _ready(self) -> None:
        # Join the server's decision hub now (not at the first request): a new hub prepares its
        # endpoint, warming the model's cache with the prompt's stable prefix before anyone asks.
        self._handle()

    def request_decision(self, context: dict) -> None:
        """Ask once; the request leaves at the end of this frame and ends in exactly one signal. The
        context is copied as plain data now: an engine object in it becomes its id, class and name
        (a freed one None), so freeing it afterwards is safe."""
        # Copied by the server only if the request is taken: a refused one costs no copy.
        server().core.request_decision(self._handle(), context, describe_engine_value)
        situation = context.get("situation", "")
        self.emit_signal(StringName("decision_requested"), situation if isinstance(situation, str) else "")

    def abort(self) -> None:
        """Drop the pending request: no signal for it, and its late answer is discarded (from an
        action run on a behavior change, not even a signal owed in that frame)."""
        handle = self._handle()
        server().core.abort(handle)
        aborted = server().aborted_in_delivery
        if aborted is not None:
            aborted.add(handle)
        self.emit_signal(StringName("decision_aborted"))

    def is_pending(self) -> bool:
        """True from request_decision until its signal (or an abort)."""
        return server().core.decisions.pending(self._handle())

    def get_behavior(self) -> StringName:
        """What the decision layer last chose (the intent at tier 1, the selector's choice otherwise)."""
        return StringName(server().core.decisions.behavior(self._handle()))

    def _get_configuration_warnings(self) -> PackedStringArray:
        warnings = []
        if not list(self.allowed_intents):
            warnings.append("Set at least one allowed intent.")
        if str(self.fallback_selector) and self._linked(self.fallback_selector, "UtilitySelector") is None:
            warnings.append("fallback_selector does not point at a UtilitySelector.")
        if not str(self.fallback_selector):
            warnings.append("No fallback_selector: tiers 2 and 3 fall back to the first allowed intent.")
        if self.soft_deadline_ms >= self.hard_deadline_ms:
            warnings.append("soft_deadline_ms must be below hard_deadline_ms.")
        try:
            examples_from(self.examples, tuple(str(intent) for intent in self.allowed_intents))
        except ValueError as error:
            warnings.append(f"{error}.")
        return PackedStringArray(warnings)


def _bad_input_reporter(decision: AsyncLLMDecision, selector: Any) -> Any:
    """What the fallback selector's choice tells when a request's context lacks an input or gives
    one as no number: reported once per decision node and key (the input reads as its default or
    0), never an `internal_error`."""
    node = weakref.ref(decision)  # the server's entry must not keep the node alive
    path = mistakes.describe(selector) if selector is not None else ""

    def bad_input(key: str, where: str, given: Any) -> None:
        owner = node()
        if owner is None:
            return
        where = f"request_decision(): the fallback_selector {path}: {where} reads input {key!r}"
        if given is MISSING:
            mistakes.report(
                owner,
                f"missing_input:{key}",
                f"{where}, which the request's context does not give; it reads as 0.0 when the "
                "selector decides.",
                fix=f"pass {key!r} in the Dictionary given to request_decision(), or turn on "
                "use_default_input (and set default_input) on the UtilityConsideration reading it.",
            )
        else:
            mistakes.report(
                owner,
                f"bad_input:{key}",
                f"{where}, which the request's context gives as {given!r}, not a number; it reads "
                "as its default_input, else 0.0, when the selector decides.",
                fix=f"pass a number (a float or an int) for {key!r}.",
            )

    return bad_input


def _say_no_endpoint(decision: AsyncLLMDecision) -> None:
    """Said once per game (counted after): with no endpoint every request falls back at tier 3."""
    from npc_mind_godot.server_singleton import ENDPOINT_SETTING, SINGLETON, START_LOCAL_MODEL_SETTING

    mistakes.report(
        SINGLETON,
        "no_endpoint",
        f"no LLM endpoint is configured (first seen by {mistakes.describe(decision)}): every "
        'request_decision() ends at once as decision_fallback(3, "no_endpoint"), and the '
        "fallback_selector decides.",
        fix=f"set the project setting {ENDPOINT_SETTING} (e.g. http://127.0.0.1:8080/v1), the node's "
        f"endpoint, or the environment variable {URL_ENV}; or turn on {START_LOCAL_MODEL_SETTING} to "
        "start the bundled local model with the game.",
        warning=True,
    )


for _field in (
    "endpoint", "soft_deadline_ms", "hard_deadline_ms", "tag_ttl", "allowed_intents", "system_prompt",
    "examples", "fallback_selector", "memory_stream", "max_response_kib", "max_decoded_kib",
):  # fmt: skip
    AsyncLLMDecision.__dict__[_field].on_change = AsyncLLMDecision._reconfigure
AsyncLLMDecision.__dict__["priority"].on_change = AsyncLLMDecision._reprioritize
