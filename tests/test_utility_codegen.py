"""Generated code a person can debug (`npc_mind.utility.codegen`): every generated function's source
is in `linecache` under a name that says what it is, so tracebacks show the line and `inspect` (a
debugger's listing) finds it; variables carry the names of what they hold; and with
NPC_MIND_NO_CODEGEN=1 both paths call the rule functions themselves, where a breakpoint is hit,
and the utility suite passes that way too (run here in a second interpreter)."""

from __future__ import annotations

import gc
import inspect
import linecache
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

from npc_mind.utility import Behavior, Consideration, UtilityError, UtilitySelector, codegen, rules
from npc_mind.utility.codegen import Names, identifier
from npc_mind.utility.curves import CurveStack, Logistic, Polynomial, Saturating

ROOT = Path(__file__).resolve().parent.parent
needs_codegen = pytest.mark.skipif(
    not codegen.GENERATE, reason="NPC_MIND_NO_CODEGEN is set: no generated code"
)


def guard(momentum: float = 0.2, k: float = 5.0) -> UtilitySelector:
    return UtilitySelector(
        [
            Behavior("attack", [Consideration("enemy distance", Saturating(k=k), weight=0.6)]),
            Behavior(
                "flee",
                [Consideration("health", Polynomial(k=2.5, invert=True)), Consideration("fear", Logistic())],
                aggregation="product",
            ),
            Behavior("strike", [Consideration("distance", Saturating(k=1.0), per_target=True)]),
        ],
        momentum=momentum,
    )


def plain(k: float = 5.0) -> UtilitySelector:
    """No per-target behavior: scoring and decision in one generated `pick`."""
    return UtilitySelector(
        [
            Behavior("attack", [Consideration("enemy distance", Saturating(k=k))]),
            Behavior("flee", [Consideration("health", Polynomial(k=2.5, invert=True))]),
        ],
        momentum=0.2,
        tie_tolerance=0.1,
    )


def generated(selector: UtilitySelector) -> list:
    """The generated functions behind one selector: scoring, the per-NPC choice (or the decision
    alone with per-target behaviors), one curve, and a batch's family group."""
    functions = [selector.scalar.function]
    functions.append(selector._decide if selector.targeted else selector.pick_fn)
    curve = selector.behaviors[0].considerations[0].curve
    curve(0.5)
    functions.append(curve._scalar)
    stack = CurveStack([curve])
    stack.evaluate(np.ones((1, 3)))
    functions.extend(stack._groups[0]._runs.values())
    return functions


@needs_codegen
@pytest.mark.parametrize("make", [guard, plain])
def test_every_generated_function_has_its_source_where_tracebacks_and_debuggers_read(make) -> None:
    for function in generated(make()):
        filename = function.__code__.co_filename
        assert filename.startswith("<npc_mind.utility ") and filename.endswith(">")
        assert linecache.getlines(filename) == function.source.splitlines(keepends=True)
        assert inspect.getsource(function) == function.source  # what pdb's `list` shows


@needs_codegen
def test_the_names_say_what_the_code_is() -> None:
    selector = guard()
    assert selector.scalar.function.__code__.co_filename == "<npc_mind.utility scores: attack|flee|strike>"
    assert selector._decide.__code__.co_filename.startswith("<npc_mind.utility decide: attack|flee|strike")
    assert plain().pick_fn.__code__.co_filename.startswith("<npc_mind.utility pick: attack|flee")
    curve = Saturating(k=3.25)
    curve(1.0)
    assert curve._scalar.__code__.co_filename == f"<npc_mind.utility curve: {curve!r}>"


@needs_codegen
def test_two_definitions_under_one_name_keep_their_own_source() -> None:
    first, second = plain(k=5.0), plain(k=7.0)
    one, two = first.pick_fn.__code__.co_filename, second.pick_fn.__code__.co_filename
    assert one != two
    assert "5.0" in "".join(linecache.getlines(one)) and "7.0" not in "".join(linecache.getlines(one))
    assert "7.0" in "".join(linecache.getlines(two))


@needs_codegen
def test_a_source_lives_as_long_as_its_function() -> None:
    run = CurveStack([Logistic(m=123.0)])._groups[0]._run(True, False)
    filename = run.__code__.co_filename
    assert linecache.getlines(filename)
    del run
    gc.collect()
    assert filename not in linecache.cache
    linecache.clearcache()  # something else clears the cache: the live sources come back
    codegen.restore_sources()
    function = plain().pick_fn
    assert inspect.getsource(function) == function.source


@needs_codegen
def test_a_traceback_through_generated_code_shows_its_line() -> None:
    selector = plain()
    with pytest.raises(UtilityError) as caught:
        selector.choose({"enemy distance": "near", "health": 1.0}, 0.0)
    frames = [f for f in traceback.extract_tb(caught.value.__traceback__) if f.filename.startswith("<npc")]
    assert [f.line for f in frames] == ["_owner._bad_input(ctx)"]
    assert "_owner._bad_input(ctx)" in "".join(traceback.format_exception(caught.value))


@needs_codegen
def test_variables_are_named_after_the_inputs_considerations_and_behaviors() -> None:
    source = guard().scalar.source
    for name in ("enemy_distance", "enemy_distance_saturating", "health_polynomial", "attack", "flee",
                 "strike_per_target", "distance_targets", "flee_fear_compensated"):  # fmt: skip
        assert re.search(rf"^\s*{name},? = ", source, re.MULTILINE), name
    assert not re.search(r"\b[gat]\d+\b", source)  # no g0, a1, t2... any more


def test_names_are_identifiers_and_unique() -> None:
    assert identifier("enemy distance") == "enemy_distance"
    assert identifier("敌人距离") == "敌人距离"  # a Unicode letter is an identifier
    assert identifier("3 doors") == "v_3_doors"
    assert identifier("class") == "v_class"
    assert identifier("__x") == "x"  # never a leading _: the namespace's own names have one
    assert identifier("!!") == "v"
    names = Names(["ctx"])
    assert [names.new(hint) for hint in ("ctx", "a b", "a-b", "a_b")] == ["ctx_2", "a_b", "a_b_2", "a_b_3"]


def test_choices_are_the_same_through_every_awkward_name() -> None:
    """Keys that sanitise alike, or to a keyword or a reserved name, are still separate inputs."""
    keys = ["a b", "a-b", "class", "ctx", "st", "now", "best", "running"]
    behaviors = [
        Behavior(f"b{i}", [Consideration(key, Saturating(k=1.0 + i))], cooldown=0.5)
        for i, key in enumerate(keys)
    ]
    selector = UtilitySelector(behaviors, momentum=0.1)
    rng = np.random.default_rng(1)
    for tick in range(20):
        context = {key: float(value) for key, value in zip(keys, rng.random(len(keys)) * 3.0, strict=True)}
        chosen = selector.choose(context, float(tick))
        batch = selector.choose_batch({key: np.array([value]) for key, value in context.items()}, float(tick))
        assert selector.index[chosen] == int(batch[0])
        assert selector.scalar.scores(context) == pytest.approx(selector.score_batch(
            {key: np.array([value]) for key, value in context.items()})[0].tolist(), abs=1e-12)  # fmt: skip


_TRACE_RULES = """
import inspect
import sys
import numpy as np
from npc_mind.utility import Behavior, Consideration, UtilitySelector, codegen, rules
from npc_mind.utility.curves import Logistic, Saturating

assert not codegen.GENERATE
rule_codes = {f.__code__: name for name, f in vars(rules).items() if inspect.isfunction(f)}
entered = set()

def trace(frame, event, arg):  # what a debugger's breakpoint rests on: the frame of the function
    if event == "call" and frame.f_code in rule_codes:
        entered.add(rule_codes[frame.f_code])
    return None

selector = UtilitySelector(
    [Behavior("attack", [Consideration("enemy", Saturating(k=2.0))]),
     Behavior("flee", [Consideration("fear", Logistic(input_min=0.0, input_max=2.0))], cooldown=1.0)],
    momentum=0.5,
)
paths = {}
for path in ("per_npc", "batch"):
    entered = set()
    sys.settrace(trace)
    for tick, (enemy, fear) in enumerate([(1.0, 0.2), (1.0, 1.9), (-0.5, 0.1), (0.1, 0.1)]):
        tags = ["nothing has it"] if tick == 3 else None  # no behavior carries the tag: fallback
        if path == "per_npc":
            selector.choose({"enemy": enemy, "fear": fear}, float(tick), tags)
        else:
            mask = None if tags is None else selector.tag_mask(tags)
            selector.choose_batch({"enemy": np.array([enemy]), "fear": np.array([fear])}, float(tick), mask)
    sys.settrace(None)
    paths[path] = entered
print(repr(paths))
"""


def _without_codegen(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NPC_MIND_NO_CODEGEN": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def test_without_codegen_a_breakpoint_in_any_rule_is_hit_on_both_paths() -> None:
    done = _without_codegen("-c", _TRACE_RULES)
    assert done.returncode == 0, done.stderr
    paths = eval(done.stdout)  # a dict of sets of names, printed by the script above
    wanted = {"saturating", "logistic", "normalised", "clamped", "finished", "boosted", "rested",
              "restricted", "tag_ready", "keeps_running", "switch_margin", "moves_forward"}  # fmt: skip
    assert wanted <= paths["per_npc"], wanted - paths["per_npc"]
    assert wanted <= paths["batch"], wanted - paths["batch"]


#: The utility tests that run again without generated code: the differential ones (per-NPC path
#: against batch against the rules) and the selectors' state machines. Left out to keep the run
#: short: the engine tests, the data format's (no generated code) and the malformed-definition fuzz.
_BOTH_WAYS = [
    "tests/test_utility_rules.py",
    "tests/test_utility_curves.py",
    "tests/test_utility_scalar.py",
    "tests/test_utility_batch.py",
    "tests/test_utility_selector.py",
]


@pytest.mark.skipif(not codegen.GENERATE, reason="already the run without generated code")
def test_the_utility_tests_pass_without_generated_code() -> None:
    done = _without_codegen("-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *_BOTH_WAYS)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout)


def test_the_primitives_float_forms_show_their_line_too() -> None:
    with pytest.raises(TypeError) as caught:
        rules.exp("not a number")
    (frame,) = [f for f in traceback.extract_tb(caught.value.__traceback__) if f.filename.startswith("<npc")]
    assert frame.filename == "<npc_mind.utility rules: exp for one float>"
    assert frame.line == "return (_exp(x) if x < 700.0 else _exp_big(x))"
