"""Utility selectors, grouped by shared definition so a whole group is scored in one batch.

Two paths, as in the Godot API:
- the Dictionary path, `evaluate(handle, context)`: immediate, one NPC, per-node anti-dithering state;
- the batched path: inputs written into the group's columns, by many NPCs at once
  (`set_inputs(handles, key, values)`, packed arrays) or by each NPC itself (`set_input(handle,
  key, value)`, one number at its row); then the server's `step` chooses for every group with new
  inputs in one `SelectorBatch.choose` per group, and `choice(handle)` / `chosen(handles)` read it.
A node normally uses one path; each keeps its own anti-dithering state.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from npc_mind.server.events import EventQueue
from npc_mind.server.registry import HandleCounter, HandleTable, Registry, UnknownHandleError, handle_array
from npc_mind.utility import SelectorBatch, UtilitySelector
from npc_mind.utility.compiled import ChoiceCheck, choice_check
from npc_mind.utility.selector import DecisionState

BEHAVIOR_CHANGED = "behavior_changed"


def _canonical(selector: UtilitySelector) -> str:
    """Canonical text of a definition: equal definitions share a group (and its batch)."""
    return json.dumps(selector.to_dict(), sort_keys=True)


def _as_given(definition: Mapping[str, Any]) -> str | None:
    """The definition's own text, to find its group again without parsing it (None: not plain JSON)."""
    try:
        return json.dumps(definition, sort_keys=True)
    except (TypeError, ValueError):
        return None


MIN_ROWS = 16  # a group's smallest row capacity
# `take_inputs`' rows: the engine binding's queued per-node set_input calls, 8 bytes a number in
# native order (the input key as its number in the names the binding was given)
INPUT_ROW = np.dtype([("handle", np.int64), ("name", np.int64), ("value", np.float64)])
# inputs a definition reads at most for its choices to be published (`ChoiceAnswers`; the binding's bound)
MAX_ANSWERED_INPUTS = 8


class ChoiceAnswers:
    """Where the bank publishes its choice table, for a reader that answers `pick` without calling
    it (the engine binding answers UtilitySelector.evaluate in C from it:
    npc_mind_godot.utility_nodes). An entry per selector whose next choice for the inputs of its
    last one is that choice again with no state written (`choice_repeats`, and its last choice is
    still its behavior): those inputs and the answer. The entries stay until the bank closes one
    (its state changed another way: a choice in Python, a batched choice, a choice with tags, its
    removal) or puts it again; the bank puts, once a frame, those its Python choices of the frame
    before left repeatable. The reader answers a call whose inputs are an open entry's numbers and
    tells the bank nothing: a repeated choice writes nothing but `last_now` (`choice_repeats`),
    which only refuses a `now` before it, and every choice of the bank is made at its clock's now,
    which never goes back, so a state whose answered calls left it at its last Python choice's
    `last_now` chooses as the state the calls would have moved. The default publishes nowhere.

    A reader that wants `checks` also gets, per group whose definition the compiled kernel scores,
    the kernel's check of a repeated choice (`compiled.ChoiceCheck`, as (function, data)
    addresses): it may answer other finite numbers when the check says the running behavior is
    chosen again for them, and keeps them (`moved`). Such a choice writes `last_now` and the state's
    scores, so the bank reads the newest numbers of a moved entry before it reads those scores
    (`SelectorBank.scores`).

    The bank's `batch_answers` is one too, for a reader that answers `choice_index`: its groups
    have no input keys, and a selector's entry (its last batched choice) is put at each step that
    changes it and closed at its removal."""

    wanted = False  # put is called
    checks = False  # groups carry the kernel's check of a repeated choice (see above)

    def put(
        self,
        groups: list[tuple[Any, ...]],
        handles: list[int],
        group_of: list[int],
        values: list[float],
        answers: list[int],
    ) -> None:
        """Put entries: `groups` (input keys, behavior names[, check]) each, every group put so
        far in the order first put; per handle its group (an index into `groups`), its answer (an
        index into the group's names) and, in `values` (handles one after another), the number of
        each input key of its group."""

    def close(self, handle: int) -> None:
        """The selector's state changed other than by a choice the reader answered."""

    def moved(self, handle: int) -> tuple[float, ...] | None:
        """The newest numbers the reader answered for the selector with its group's check, when it
        answered other numbers than those put since it was put or last asked; else None."""
        return None

    def clear(self) -> None:
        """Nothing put holds any more: the reader answers no call until the next put."""


@dataclass
class PutGroups:
    """The groups put into a `ChoiceAnswers` so far, in the order first put, and each selector
    group's place among them."""

    groups: list[tuple[Any, ...]] = field(default_factory=list)  # (input keys, names[, check addresses])
    places: dict[int, int] = field(default_factory=dict)  # SelectorGroup.index -> place
    kept: list[ChoiceCheck] = field(default_factory=list)  # the checks the groups point to, alive

    def place_of(self, group: SelectorGroup, keys: list[str], checked: bool = False) -> int:
        """The place of `group` (its input keys `keys`), added on first use; `checked`: with the
        kernel's check of its repeated choice, when the kernel scores its definition."""
        at = self.places.get(group.index)
        if at is None:
            at = self.places[group.index] = len(self.groups)
            prototype = group.prototype
            settings = prototype.settings
            check = (
                choice_check(prototype.scorer, settings.momentum, settings.tie_tolerance)
                if checked and prototype.repeats and keys == prototype.scorer.keys
                else None
            )
            if check is None:
                self.groups.append((keys, list(group.names)))
            else:
                self.kept.append(check)
                self.groups.append((keys, list(group.names), (check.function, check.data)))
        return at


@dataclass
class SelectorGroup:
    """Every selector with one definition; row r of the batch arrays belongs to `rows[r]`.

    Freed rows are reused, and the rows are compacted when fewer than a quarter are live, so a
    group's arrays (and its batched `choose`) stay proportional to its live selectors however many
    have come and gone.
    """

    key: str
    index: int
    prototype: UtilitySelector
    rows: list[int] = field(default_factory=list)  # handle per row, -1 for a free row
    free: list[int] = field(default_factory=list)  # free rows, the next one to reuse last
    inputs: dict[str, np.ndarray] = field(default_factory=dict)  # key -> float64 (rows,)
    batch: SelectorBatch | None = None
    chosen: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    dirty: bool = False
    written_now: bool = False  # inputs were written since the last step (`written`)
    fed: bool = False  # `set_inputs` (many selectors at once) wrote into this group's columns
    unset: list[str] = field(default_factory=list)  # the last `choose`'s keys that no one ever set
    # handles `take_inputs` wrote since the last step: marked `fed` when the step needs to know
    fed_handles: list[np.ndarray] = field(default_factory=list)
    given: list[str] = field(default_factory=list)  # the texts of `SelectorBank.given_keys` for it
    # memoryviews of the input columns: one number written per node costs less through them
    views: dict[str, memoryview] = field(default_factory=dict)
    # read once per node per frame: plain attributes, not properties
    names: tuple[str, ...] = field(init=False)
    pick_fn: Callable[..., int] = field(init=False)  # the definition's generated choice for one NPC
    repeats: bool = field(init=False)  # its choice for the same inputs repeats (`choice_repeats`)
    owner: Any = field(init=False)  # what pick_fn reports errors and NaN counts through

    def __post_init__(self) -> None:
        self.repeats = self.prototype.repeats
        self.names = self.prototype.names
        self.pick_fn = self.prototype.pick_fn
        self.owner = self.prototype.scalar

    def written(self, changed: bool, rows: Any) -> None:
        """Inputs of `rows` were written (`changed`: some value differs from the one before): the
        next step chooses for the group unless its choice would repeat itself, which it does when no
        input changed, the definition's choice repeats (`choice_repeats`: only `last_now` would move)
        and every one of those rows has chosen before."""
        self.written_now = True
        if changed or not self.repeats:
            self.dirty = True
        elif type(rows) is int:  # one node's call: a plain read (no array made)
            if self.chosen.item(rows) < 0:
                self.dirty = True
        elif bool((self.chosen[rows] < 0).any()):
            self.dirty = True

    def column(self, key: str) -> np.ndarray:
        """The input column of `key` (made, all 0, on first use)."""
        values = self.inputs.get(key)
        if values is None:
            values = self.inputs[str(key)] = np.zeros(len(self.rows))
            self.views[str(key)] = memoryview(values)  # type: ignore[arg-type]  # ndarray has the buffer protocol (stubs: 3.12+)
        return values

    def _columns_replaced(self) -> None:
        self.views = {key: memoryview(values) for key, values in self.inputs.items()}  # type: ignore[arg-type]  # ndarray has the buffer protocol (stubs: 3.12+)

    @property
    def live(self) -> int:
        return len(self.rows) - len(self.free)

    def add_row(self, handle: int) -> int:
        if not self.free:
            self._grow(max(MIN_ROWS, 2 * len(self.rows)))
        row = self.free.pop()
        self.rows[row] = handle
        # A free row is scored with the others: a new selector starts from nothing on it.
        for values in self.inputs.values():
            values[row] = 0.0
        self.chosen[row] = -1
        assert self.batch is not None
        self.batch.reset_rows([row])
        return row

    def free_row(self, row: int) -> None:
        self.rows[row] = -1
        self.free.append(row)

    def _grow(self, size: int) -> None:
        """Room for `size` rows: the new ones free; existing rows keep their inputs and state."""
        old = len(self.rows)
        self.rows.extend([-1] * (size - old))
        self.free.extend(range(size - 1, old - 1, -1))  # lowest row reused first
        for key, values in self.inputs.items():
            self.inputs[key] = np.concatenate([values, np.zeros(size - old)])
        self._columns_replaced()
        self.chosen = np.concatenate([self.chosen, np.full(size - old, -1, dtype=np.intp)])
        if self.batch is None:
            self.batch = self.prototype.batch(size)
        else:
            self.batch.resize(size)

    def compact(self) -> dict[int, int] | None:
        """When under a quarter of the rows are live: keep the live rows (in order) in half the
        room; returns {handle: new row} for the caller's maps, None when nothing moved."""
        if len(self.rows) <= MIN_ROWS or 4 * self.live >= len(self.rows) or self.live == 0:
            return None
        assert self.batch is not None
        keep = np.flatnonzero(np.asarray(self.rows) >= 0)
        size = max(MIN_ROWS, 2 * keep.size)
        order = np.concatenate([keep, np.setdiff1d(np.arange(len(self.rows)), keep)[: size - keep.size]])
        self.batch.keep_rows(order)
        self.batch.reset_rows(np.arange(keep.size, size))
        for key, values in self.inputs.items():
            column = values[order]
            column[keep.size :] = 0.0
            self.inputs[key] = column
        self._columns_replaced()
        self.chosen = self.chosen[order]
        self.chosen[keep.size :] = -1
        handles = [self.rows[row] for row in keep.tolist()]
        self.rows = handles + [-1] * (size - keep.size)
        self.free = list(range(size - 1, keep.size - 1, -1))
        return {handle: row for row, handle in enumerate(handles)}

    def never_set(self) -> list[str]:
        """The keys the definition reads that no input was ever written for (they read as 0)."""
        return [key for key in self.prototype.scorer.keys if key not in self.inputs]

    def choose(self, now: float, allowed: np.ndarray | None) -> np.ndarray:
        assert self.batch is not None
        missing = self.unset = self.never_set()
        inputs = dict(self.inputs)
        for key in missing:  # never set through the batch path: counts as 0 for every NPC
            inputs[key] = np.zeros(len(self.rows))
        return self.batch.choose(inputs, now, allowed)


@dataclass(slots=True)  # read on every per-node call: one small object, no instance dict
class SelectorEntry:
    group: SelectorGroup
    row: int  # -1 once removed
    handle: int = 0
    state: DecisionState | None = None  # the Dictionary path's own anti-dithering state, made on first use
    last_behavior: str = ""
    last_scores: dict[str, float] = field(default_factory=dict)  # the batched path's last choice
    by_dictionary: bool = False  # the last choice was `evaluate`'s: its scores are in `state`
    batch_choice: int = -1  # the batched path's last choice (-1 before any)
    fed: bool = False  # `set_input_values` wrote this selector's inputs (it uses the batched path)
    context: Mapping[str, Any] | None = None  # the last `pick`'s context, while `answers` is wanted


@dataclass
class SelectorBank:
    counter: HandleCounter
    events: EventQueue
    now: Callable[[], float]  # the server's clock (`pick` reads it)
    groups: dict[str, SelectorGroup] = field(default_factory=dict)
    entries: Registry[SelectorEntry] = field(init=False)
    table: HandleTable = field(default_factory=lambda: HandleTable("selector"))
    by_index: dict[int, SelectorGroup] = field(default_factory=dict)
    # a definition's text as given -> its group's key (so a known definition is not parsed again)
    given_keys: dict[str, str] = field(default_factory=dict)
    # on_missing_input(handle, key, where): told at each batched choice of a selector that uses the
    # batched path (it set inputs) while an input its definition reads was never set by any
    # selector of its group (it reads as 0); None: nothing is told
    on_missing_input: Callable[[int, str, str], None] | None = None
    answers: ChoiceAnswers = field(default_factory=ChoiceAnswers)  # the choice table, published
    # the batched path's choices, published: per selector its last batched choice, no inputs (a
    # reader answers `choice_index` without calling it); put at each step for the ones that changed
    batch_answers: ChoiceAnswers = field(default_factory=ChoiceAnswers)
    # selectors whose Dictionary-path choice reads more than its context (a front end's sources, a
    # target it sets): never put into `answers`
    unanswered: set[int] = field(default_factory=set)
    picked: list[SelectorEntry] = field(default_factory=list)  # `pick`'s entries this frame
    # the groups put into `answers` and into `batch_answers`, each with its place there
    answer_groups: PutGroups = field(default_factory=PutGroups)
    batch_groups: PutGroups = field(default_factory=PutGroups)
    _next_group: int = 0

    def __post_init__(self) -> None:
        self.entries = Registry("selector", self.counter)
        self._by_handle = self.entries.entries  # the per-node calls' plain dict lookup

    def add(self, definition: Mapping[str, Any]) -> int:
        given = _as_given(definition)
        group = self.groups.get(self.given_keys.get(given, "")) if given is not None else None
        if group is None:
            prototype = UtilitySelector.from_dict(definition)  # raises UtilityDefinitionError
            key = _canonical(prototype)
            group = self.groups.get(key)
            if group is None:
                group = SelectorGroup(key, self._next_group, prototype)
                self.groups[key] = self.by_index[group.index] = group
                self._next_group += 1
            if given is not None:
                self.given_keys[given] = key
                group.given.append(given)
        entry = SelectorEntry(group, -1)
        handle = entry.handle = self.entries.add(entry)
        row = entry.row = group.add_row(handle)
        self.table.set(handle, group.index, row)
        return handle

    def remove(self, handle: int) -> None:
        entry = self.entries.pop(handle)
        self.table.clear(handle)
        self.answers.close(handle)
        self.batch_answers.close(handle)
        self.unanswered.discard(handle)
        row, entry.row, entry.state = entry.row, -1, None  # a node holding the entry: unknown handle
        group = entry.group
        if group.live == 1:  # the last one: the group goes
            del self.groups[group.key]
            del self.by_index[group.index]
            for given in group.given:
                del self.given_keys[given]
            return
        group.free_row(row)
        moved = group.compact()
        for moved_handle, row in (moved or {}).items():
            self.entries.get(moved_handle).row = row
            self.table.set(moved_handle, group.index, row)

    def names(self, handle: int) -> tuple[str, ...]:
        return self.entries.get(handle).group.names

    def group_size(self, handle: int) -> int:
        return self.entries.get(handle).group.live

    # --- the Dictionary path -------------------------------------------------------------------
    def evaluate(
        self, handle: int, context: Mapping[str, Any], now: float, allowed_tags: Collection[str] | None = None
    ) -> str:
        """The behavior to run now for one selector (its own anti-dithering state), at `now`."""
        entry = self.entries.get(handle)
        state = entry.state or self._new_state(entry)
        self.answers.close(handle)  # a choice with tags: its state is not the published one
        return self._picked(entry, entry.group.prototype.pick(state, context, now, allowed_tags))

    def entry(self, handle: int) -> SelectorEntry:
        """The entry of a handle, for the per-node calls (`pick`, `set_input_values`,
        `choice_index`), which then skip the handle lookup; a removed entry raises in them as an
        unknown handle does."""
        return self.entries.get(handle)

    def pick(self, entry: SelectorEntry, context: Mapping[str, Any]) -> int:
        """`evaluate` at the clock's now, without tags, as the chosen index into the group's `names`:
        the per-node call. Once per node per frame from GDScript, so one Python call into the
        definition's generated scoring and decision, nothing copied or allocated on the way (the
        scores are ranked only when someone asks). While `answers` is wanted, the context is kept
        (not copied: the caller must not change it after) for the next frame's choice table."""
        group = entry.group
        chosen = group.pick_fn(context, group.owner, entry.state or self._new_state(entry), self.now(), None)
        entry.by_dictionary = True  # `_picked`'s bookkeeping, inline here: a call less per node
        if self.answers.wanted:  # its state may have moved from the published one: closed
            self.answers.close(entry.handle)
            entry.context = context
            self.picked.append(entry)
        name = group.names[chosen]
        if name is not entry.last_behavior:
            self._changed(entry.handle, entry, name)
        return chosen

    def _picked(self, entry: SelectorEntry, chosen: int) -> str:
        """After a Dictionary-path choice: its scores are the state's; a new behavior is signalled
        (`_changed` compares; the identity test first skips it for the group's same str object)."""
        name = entry.group.names[chosen]
        entry.by_dictionary = True
        if name is not entry.last_behavior:
            self._changed(entry.handle, entry, name)
        return name

    def _new_state(self, entry: SelectorEntry) -> DecisionState:
        """An entry's first Dictionary-path state (also where a removed entry is refused: its
        state is gone)."""
        if self._by_handle.get(entry.handle) is not entry:
            _removed(entry)
        state = entry.state = entry.group.prototype.new_state()
        return state

    def scores(self, handle: int) -> dict[str, float]:
        entry = self.entries.get(handle)
        if entry.by_dictionary and entry.state is not None:
            self._settle(entry)
            return entry.group.prototype.scores_of(entry.state)
        return dict(entry.last_scores)

    def settle_answers(self) -> None:
        """Every selector's state takes the numbers the reader last answered it for with its
        group's check (`ChoiceAnswers.moved`): a reader about to be cleared loses nothing."""
        for entry in list(self._by_handle.values()):
            if entry.by_dictionary and entry.state is not None:
                self._settle(entry)

    def _settle(self, entry: SelectorEntry) -> None:
        numbers = self.answers.moved(entry.handle)
        if numbers is not None:  # the reader chose again for these: the state's scores are theirs
            self.pick(entry, dict(zip(entry.group.prototype.scalar.scalar_keys, numbers, strict=True)))

    # --- the batched path ----------------------------------------------------------------------
    def set_inputs(self, handles: npt.ArrayLike, key: str, values: npt.ArrayLike) -> None:
        """One input for many selectors; a stale id's row is skipped (see `HandleTable.groups`)."""
        handles = handle_array(handles)
        values = np.asarray(values, dtype=np.float64).ravel()
        if handles.shape != values.shape:
            raise ValueError(f"set_inputs({key!r}): {handles.size} handles but {values.size} values")
        for owner, positions, rows in self.table.groups(handles):
            group = self.by_index[owner]
            column, given = group.column(key), values[positions]
            changed = _differ_any(column[rows], given)
            column[rows] = given
            group.fed = True
            group.written(changed, rows)

    def preset(self, handle: int, key: str, value: float) -> None:
        """A selector's starting value of an input (a consideration's default): written as
        `set_input` does, but it does not count as using the batched path (`on_missing_input`)."""
        group = self.entries.get(handle).group
        fed = group.fed
        self.set_inputs([handle], key, [value])
        group.fed = fed

    def set_input(self, handle: int, key: str, value: float) -> None:
        """One input of one selector for the next batched choice: written straight into its
        group's column at its row (the per-node form of `set_inputs`)."""
        self.set_input_values(self.entries.get(handle), {key: value})

    def set_input_values(self, entry: SelectorEntry, values: Mapping[str, float]) -> None:
        """Several inputs of one selector (key -> number; `entry(handle)`), each written into its
        group's column at its row: once per node per frame, so one number per key through the
        column's memoryview."""
        row = entry.row
        if row < 0:
            _removed(entry)
        group = entry.group
        views = group.views
        entry.fed = True
        changed = False
        try:
            for key, value in values.items():
                view = views[key]
                before = view[row]
                view[row] = value  # type: ignore[call-overload]  # a float64 view takes a float
                changed = changed or _differ(before, view[row])
        except (KeyError, TypeError, ValueError, OverflowError):
            self._set_checked(group, row, values)  # a new key, or a value a float view refuses
            changed = True
        group.written(changed, row)

    def take_inputs(self, raw: bytes, names: Sequence[str]) -> None:
        """`set_input_values` of many calls at once: `raw` holds `INPUT_ROW` records (handle, the
        key's number in `names`, a finite value) in call order, of live selectors; each (selector,
        key) gets its last value, as the calls one by one would give it."""
        rows = np.frombuffer(raw, INPUT_ROW)
        handles, numbers, values = rows["handle"], rows["name"], rows["value"]
        count = len(names)
        for owner, positions, group_rows in self.table.groups(handles):
            group = self.by_index[owner]
            group.fed_handles.append(handles[positions])
            called, at_rows, given = numbers[positions], group_rows, values[positions]
            places = at_rows * count + called  # one per (row, key)
            if np.bincount(places).max() > 1:  # a key called twice: its last call wins
                _, last = np.unique(places[::-1], return_index=True)  # first in the reversed order
                kept = positions.size - 1 - last
                called, at_rows, given = called[kept], at_rows[kept], given[kept]
            changed = False
            for number in np.flatnonzero(np.bincount(called, minlength=count)).tolist():
                picked = called == number
                column, written, value = group.column(names[number]), at_rows[picked], given[picked]
                changed = changed or _differ_any(column[written], value)
                column[written] = value
            group.written(changed, group_rows)

    @staticmethod
    def _set_checked(group: SelectorGroup, row: int, values: Mapping[str, float]) -> None:
        for key, value in values.items():
            column = group.column(key)
            try:
                column[row] = value  # numpy's conversions (a numeric string too)
            except (TypeError, ValueError):
                raise TypeError(f"set_input({key!r}): the value must be a number, got {value!r}") from None

    def choice(self, handle: int) -> str:
        """The batched path's last choice for one selector ("" before any)."""
        entry = self.entries.get(handle)
        return entry.group.names[entry.batch_choice] if entry.batch_choice >= 0 else ""

    @staticmethod
    def choice_index(entry: SelectorEntry) -> int:
        """`choice` as an index into the group's `names` (-1 before any; `entry(handle)`)."""
        if entry.row < 0:
            _removed(entry)
        return entry.batch_choice

    def step(self, now: float) -> None:
        """Choose for every group whose inputs changed: one batch call per definition."""
        for group in self.groups.values():
            written, group.written_now = group.written_now, False
            if not group.dirty:
                if written:  # the same inputs again: the choice repeats, a never-set input is told again
                    group.unset = group.never_set()
                    self._told_unset(group)
                continue
            group.dirty = False
            chosen = group.choose(now, None)
            self._told_unset(group)
            changed = np.flatnonzero(chosen != group.chosen)
            group.chosen = chosen
            handles: list[int] = []
            for row in changed.tolist():
                handle = group.rows[row]
                if handle < 0:
                    continue
                entry = self.entries.get(handle)
                entry.last_scores = dict(zip(group.names, _row_scores(group, row), strict=True))
                entry.by_dictionary = False
                self.answers.close(handle)
                entry.batch_choice = int(chosen[row])
                handles.append(handle)
                self._changed(handle, entry, group.names[entry.batch_choice])
            if handles and self.batch_answers.wanted:
                self._publish_batch(group, handles)
        if self.answers.wanted:
            self._publish()

    def _publish_batch(self, group: SelectorGroup, handles: list[int]) -> None:
        """The batched choices of `handles` (of `group`, chosen this step) into `batch_answers`."""
        answers = [self._by_handle[handle].batch_choice for handle in handles]
        at = self.batch_groups.place_of(group, [])
        self.batch_answers.put(self.batch_groups.groups, handles, [at] * len(handles), [], answers)

    def _publish(self) -> None:
        """The choice table's changes (`ChoiceAnswers`): the entries of the selectors that chose in
        Python in the frame before and are repeatable."""
        entries, self.picked = self.picked, []
        if not entries:
            return
        handles: list[int] = []
        group_of: list[int] = []
        values: list[float] = []
        answers: list[int] = []
        for entry in {entry.handle: entry for entry in entries}.values():
            numbers = self._repeatable(entry)
            if numbers is None:
                continue
            group = entry.group
            keys = list(group.prototype.scalar.scalar_keys)
            at = self.answer_groups.place_of(group, keys, self.answers.checks)
            handles.append(entry.handle)
            group_of.append(at)
            values += numbers
            answers.append(entry.state.running)  # type: ignore[union-attr]  # set (`_repeatable`)
        if handles:
            self.answers.put(self.answer_groups.groups, handles, group_of, values, answers)

    def _repeatable(self, entry: SelectorEntry) -> list[float] | None:
        """The numbers of the entry's last Dictionary-path context, when its next choice for those
        numbers is its running behavior again with no state written (`choice_repeats`), that
        choice is still its last behavior (no batched choice since), and they are finite; else None."""
        group, state, context = entry.group, entry.state, entry.context
        if (
            state is None or context is None or not group.prototype.repeats or not entry.by_dictionary
            or entry.handle in self.unanswered
            or state.running < 0 or self._by_handle.get(entry.handle) is not entry
            or entry.last_behavior != group.names[state.running]
        ):  # fmt: skip
            return None
        keys = group.prototype.scalar.scalar_keys
        if len(keys) > MAX_ANSWERED_INPUTS:
            return None
        try:
            numbers = [float(context[key]) for key in keys]
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        return numbers if all(math.isfinite(number) for number in numbers) else None

    def _told_unset(self, group: SelectorGroup) -> None:
        """After a step's look at the group's inputs: its never-set keys told (`_tell_unset`), and
        the handles written since the last step let go."""
        if group.unset and self.on_missing_input is not None:
            self._tell_unset(group)
        group.fed_handles.clear()

    def _tell_unset(self, group: SelectorGroup) -> None:
        """`on_missing_input` for each of the group's selectors that use the batched path."""
        tell = self.on_missing_input
        assert tell is not None
        by_handle = self._by_handle
        for handle in np.unique(np.concatenate(group.fed_handles)).tolist() if group.fed_handles else ():
            entry = by_handle.get(handle)
            if entry is not None:  # (removed since its call)
                entry.fed = True
        for handle in group.rows:
            if handle < 0 or not (group.fed or self._by_handle[handle].fed):
                continue
            for key in group.unset:
                tell(handle, key, group.prototype.first_use(key))

    def chosen(self, handles: npt.ArrayLike) -> np.ndarray:
        """Behavior index per handle from the last batched choice (-1 before any, or for a stale id)."""
        handles = handle_array(handles)
        out = np.full(handles.size, -1, dtype=np.int32)
        for owner, positions, rows in self.table.groups(handles):
            out[positions] = self.by_index[owner].chosen[rows]
        return out

    def _changed(self, handle: int, entry: SelectorEntry, behavior: str) -> None:
        if behavior != entry.last_behavior:
            entry.last_behavior = behavior
            self.events.push(handle, BEHAVIOR_CHANGED, behavior)


def _differ(before: float, after: float) -> bool:
    """Whether an input's value changed, bit for bit (-0.0 and 0.0 differ; a NaN always does)."""
    return before != after or (before == 0.0 and math.copysign(1.0, before) != math.copysign(1.0, after))


def _differ_any(before: np.ndarray, after: np.ndarray) -> bool:
    """`_differ` over arrays: whether any value changed, bit for bit (a NaN always has)."""
    return bool((before.view(np.int64) != after.view(np.int64)).any() or np.isnan(after).any())


def _removed(entry: SelectorEntry) -> None:
    raise UnknownHandleError(f"no selector with handle {entry.handle} (never added, or removed)")


def _row_scores(group: SelectorGroup, row: int) -> list[float]:
    assert group.batch is not None and group.batch.scores is not None
    scores = group.batch.scores[row]
    if scores.ndim > 1:  # per-target: the best target's score
        scores = scores.max(axis=-1)
    return [float(value) for value in scores]
