"""`SelectorBank.take_inputs` (the binding's queued set_input calls, in one batch) against the same
calls one by one (`set_input_values`), and the choice table's `unanswered` selectors."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.selectors import INPUT_ROW, ChoiceAnswers

NAMES = ["threat", "calm", "noise", "hunger"]  # hunger: read by no definition


def definition(keys: list[str], momentum: float = 0.0) -> dict[str, Any]:
    return {
        "behaviors": [
            {"name": f"b{i}", "considerations": [{"input_key": key, "curve_type": "linear"}]}
            for i, key in enumerate(keys)
        ],
        "momentum": momentum,
    }


DEFINITIONS = [definition(["threat", "calm"]), definition(["calm", "noise"], 0.2), definition(["noise"])]


def banks(count: int) -> tuple[MindServer, MindServer, list[int]]:
    """Two servers with the same selectors (three definitions, in turn)."""
    made = [MindServer(ClockMode.MANUAL), MindServer(ClockMode.MANUAL)]
    handles = [[server.add_selector(DEFINITIONS[i % 3]) for i in range(count)] for server in made]
    assert handles[0] == handles[1]
    return made[0], made[1], handles[0]


calls = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, len(NAMES) - 1), st.floats(-10, 10, allow_nan=False)),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(calls=calls, split=st.integers(0, 60))
def test_a_batch_of_rows_is_the_calls_one_by_one(calls: list[tuple[int, int, float]], split: int) -> None:
    one_by_one, batched, handles = banks(8)
    for selector, name, value in calls:
        entry = one_by_one.selectors.entry(handles[selector])
        one_by_one.selectors.set_input_values(entry, {NAMES[name]: value})
    rows = np.array([(handles[s], n, v) for s, n, v in calls], dtype=INPUT_ROW)
    for part in (rows[:split], rows[split:]):  # two hand-overs in one frame
        if part.size:
            batched.selectors.take_inputs(part.tobytes(), NAMES)
    pairs = zip(one_by_one.selectors.groups.values(), batched.selectors.groups.values(), strict=True)
    for group_a, group_b in pairs:
        assert sorted(group_a.inputs) == sorted(group_b.inputs)
        for key, column in group_a.inputs.items():
            assert column.tobytes() == group_b.inputs[key].tobytes(), key
        assert group_a.dirty == group_b.dirty
    for server in (one_by_one, batched):
        server.selectors.step(1.0)
    assert one_by_one.selectors.chosen(handles).tolist() == batched.selectors.chosen(handles).tolist()
    fed = [one_by_one.selectors.entry(handle).fed for handle in handles]
    assert fed == [any(handles[s] == handle for s, _, _ in calls) for handle in handles]


def test_a_batch_marks_its_selectors_fed_for_the_unset_warning() -> None:
    server, _, handles = banks(3)
    told: list[tuple[int, str]] = []
    server.selectors.on_missing_input = lambda handle, key, where: told.append((handle, key))
    rows = np.array([(handles[0], 0, 1.0)], dtype=INPUT_ROW)  # threat only: calm never set
    server.selectors.take_inputs(rows.tobytes(), NAMES)
    server.selectors.step(1.0)
    assert told == [(handles[0], "calm")]


class Recorded(ChoiceAnswers):
    wanted = True

    def __init__(self) -> None:
        self.put_handles: list[int] = []

    def put(self, groups: Any, handles: list[int], group_of: Any, values: Any, answers: Any) -> None:
        self.put_handles += handles


def test_unanswered_selectors_are_never_put_in_the_choice_table() -> None:
    server, _, handles = banks(2)
    table = server.selectors.answers = Recorded()
    server.selectors.unanswered.add(handles[1])
    for handle in handles:
        server.pick(server.selectors.entry(handle), {"threat": 0.5, "calm": 0.2, "noise": 0.1})
    server.selectors.step(1.0)
    assert table.put_handles == [handles[0]]
    server.remove(handles[1])
    assert handles[1] not in server.selectors.unanswered


REPEATING = [  # momentum and a tie tolerance repeat; commitment and a cooldown read the time
    {**definition(["threat", "calm"], 0.3), "tie_tolerance": 0.05},
    definition(["calm", "noise"]),
    {**definition(["threat", "noise"]), "commitment": 0.5},
    {"behaviors": [
        {**definition(["threat"])["behaviors"][0], "cooldown": 0.4},
        *definition(["x", "calm"])["behaviors"][1:],
    ]},
]
frames = st.lists(  # per frame, the calls: (selector, name, value from few values, so inputs repeat)
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 2), st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0])),
        max_size=12,
    ),
    min_size=1, max_size=25,
)


COMMITTED = [  # selector 2 (commitment 0.5 s) keeps threat while noise is better by less than the
    # interrupt margin, then, its inputs the same each frame, switches once the commitment is over
    [(2, 0, 0.5), (2, 2, 0.0)], *[[(2, 2, 0.7)]] * 10,
]


@settings(max_examples=150, deadline=None)
@given(frames=frames, path=st.sampled_from(["per_node", "queued", "many"]))
@example(frames=COMMITTED, path="per_node")
@example(frames=COMMITTED, path="queued")
@example(frames=COMMITTED, path="many")
def test_a_step_that_skips_an_unchanged_batch_chooses_as_one_that_chooses_again(
    frames: list[list[tuple[int, int, float]]], path: str
) -> None:
    """`SelectorGroup.written`: a group whose inputs did not change and whose choice repeats is not
    chosen for again; the choices, the behavior_changed signals and the scores are those of the
    same server made to choose every group given an input, as it did before. The inputs come one
    node's call at a time, as the binding's queued rows, or one key for many (`set_inputs`)."""
    skipping, choosing = MindServer(ClockMode.MANUAL), MindServer(ClockMode.MANUAL)
    handles = [skipping.add_selector(REPEATING[i % 4]) for i in range(8)]
    assert handles == [choosing.add_selector(REPEATING[i % 4]) for i in range(8)]
    for frame, calls in enumerate(frames, start=1):
        for server in (skipping, choosing):
            if path == "queued":
                rows = np.array([(handles[s], n, v) for s, n, v in calls], dtype=INPUT_ROW)
                if rows.size:
                    server.selectors.take_inputs(rows.tobytes(), NAMES)
            elif path == "many":  # per key, its calls in order (the last of a selector wins)
                for number, name in enumerate(NAMES):
                    picked = [(handles[s], v) for s, n, v in calls if n == number]
                    if picked:
                        server.selectors.set_inputs([h for h, _ in picked], name, [v for _, v in picked])
            else:
                for selector, name, value in calls:
                    entry = server.selectors.entry(handles[selector])
                    server.selectors.set_input_values(entry, {NAMES[name]: value})
        for selector, _, _ in calls:  # as before the skip: a group given any input chooses
            choosing.selectors.entry(handles[selector]).group.dirty = True
        now = 0.1 * frame
        for server in (skipping, choosing):
            server.clock._now = now
            server.selectors.step(now)
        chosen = [server.selectors.chosen(handles).tolist() for server in (skipping, choosing)]
        assert chosen[0] == chosen[1], frame
        signals = [[(e.handle, e.args) for e in server.events.drain()] for server in (skipping, choosing)]
        assert signals[0] == signals[1], frame
        for handle in handles:
            assert skipping.scores(handle) == choosing.scores(handle), (frame, handle)
