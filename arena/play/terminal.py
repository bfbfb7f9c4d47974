"""The terminal table: the same :class:`~arena.play.table.Table` drawn in text.

Each decision the table is drawn (every seat's cards, stacks and last action, the pot, the
wild rank, the Low Chicago card), the legal actions are listed by number, and a bad entry is
answered with what is legal and asked again. After each hand: the showdown, who won which pot
and why, the running result in big bets; then Enter for the next hand, ``s`` to save the hand
as a PHH file (where ``envs.engine.phh`` is installed), ``q`` to stop.

``input_fn`` and ``out`` make it scriptable: the tests feed it lines.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from arena.play.table import Table
from envs.engine import phh
from envs.files import atomic_write_text, make_folder

__all__ = ["parse_choice", "play_terminal", "render_result", "render_text"]

SUIT_TEXT = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}


def _cards(cards, *, ascii_only: bool) -> str:
    out = []
    for c in cards:
        if c is None:
            out.append("[##]")
        else:
            out.append(f"[{c}]" if ascii_only else f"[{c[0]}{SUIT_TEXT[c[1]]}]")
    return " ".join(out) or "-"


def render_text(state: dict, *, ascii_only: bool = False) -> str:
    """The table in text: one block per seat (the person's last), then the pot and the wilds."""
    seed = "secret" if state["seed"] is None else state["seed"]
    head = (f"== {state['title']} - hand {state['hand'] + 1} (seed {seed}) - betting round "
            f"{state['street'] + 1} of {state['streets']}, bet {state['bet_size']} ==")
    lines = [head]
    seats = [s for s in state["seats"] if not s["you"]] + [s for s in state["seats"] if s["you"]]
    for s in seats:
        mark = ">" if state["current"] == s["seat"] else " "
        flags = "".join([" (D)" if s["button"] else "", " folded" if s["folded"] else "",
                         " all-in" if s["all_in"] else ""])
        down = _cards(s["hole"], ascii_only=ascii_only)
        up = _cards(s["up"], ascii_only=ascii_only)
        what = s["value"] or (f"showing {s['showing']}" if s["showing"] else "")
        lines.append(f"{mark} {s['name']:<12}{flags:<10} down {down:<16} up {up:<24} stack {s['stack']:>5} "
                     f"in {s['total']:>4}  {s['last_action'] or ''}".rstrip())
        if what:
            lines.append(f"    {what}")
    def one(card: str) -> str:
        return _cards([card], ascii_only=ascii_only).strip("[]")

    extra = [f"Pot {state['pot']}"]
    if state["your_turn"] and state["to_call"]:
        extra.append(f"to call {state['to_call']}")
    w = state.get("wild")
    if w is not None:
        if w["rank"]:
            extra.append(f"wild: {w['rank']}s (the {one(w['card'])} after the {one(w['queen'])})")
        else:
            extra.append("nothing wild")
        if w["ended"]:
            extra.append(f"the {one(w['ended_by'])} ended {w['ended']}s wild")
    c = state.get("low_chicago")
    if c is not None and c["winner"] is None:
        extra.append(f"your Low Chicago card: {one(c['card']) if c['card'] else 'none'}")
    lines.append(" | ".join(extra))
    if state["last"]:
        lines.append(f"Last: {state['last']}")
    return "\n".join(lines)


def render_result(state: dict) -> str:
    """The end of a hand: the showdown, each pot's winners and why, the running result."""
    r = state["result"]
    lines = [f"*** Hand over ({r['how']}) ***"]
    for s in r["shows"]:
        who = "You show" if s["seat"] == state["you"] else f"{s['name']} (seat {s['seat']}) shows"
        lines.append(f"  {who} {' '.join(s['cards'])}: {s['value']}")
    for pot in r["pots"]:
        for w in pot["winners"]:
            who = "You win" if w["seat"] == state["you"] else f"{w['name']} (seat {w['seat']}) wins"
            lines.append(f"  {who} {w['amount']} from the {pot['name'].lower()}: {w['why']}")
    sign = "+" if r["you"] > 0 else ""
    hands = state["session"]["hands"]
    lines.append(f"You: {sign}{r['you']} chips ({sign}{r['you_big_bets']} BB). Running result: "
                 f"{state['session']['big_bets']} BB over {hands} {'hand' if hands == 1 else 'hands'}.")
    return "\n".join(lines)


def parse_choice(text: str, choices: list[dict]) -> int | None:
    """The action id an entry names: its number in the list, or a word (``f``/``fold``,
    ``c``/``check``/``call``, ``b``/``r``/``bet``/``raise``/``complete`` for the smallest
    size), or None when it names no legal action."""
    t = text.strip().lower()
    if not t:
        return None
    if t.isdigit():
        i = int(t)
        return choices[i - 1]["id"] if 1 <= i <= len(choices) else None
    words = {"f": ("fold",), "fold": ("fold",), "x": ("check",), "k": ("check",), "check": ("check",),
             "c": ("check", "call", "bring_in"), "call": ("call", "check", "bring_in"),
             "bring": ("bring_in",),
             "b": ("bet", "raise", "complete"), "r": ("raise", "bet", "complete"), "bet": ("bet", "raise"),
             "raise": ("raise", "bet"), "complete": ("complete",)}
    for kind in words.get(t, ()):
        for c in choices:
            if c["kind"] == kind:
                return c["id"]
    return None


def play_terminal(table: Table, *, input_fn: Callable[[str], str] = input, out: TextIO = sys.stdout,
                  hands: int | None = None, ascii_only: bool = False, phh_dir: str | Path | None = None,
                  show_agents: bool = True) -> int:
    """Play hands at ``table`` in a terminal until ``q``, end of input, or ``hands`` hands;
    the number of hands finished."""

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    def ask(prompt: str) -> str | None:
        try:
            return input_fn(prompt)
        except EOFError:
            return None

    frames = [table.state()] + table.play_agents()
    while True:
        if show_agents:
            for f in frames[1:-1]:
                if f["last"]:
                    say(f"  {f['last']}")
        state = frames[-1]
        if state["result"] is None:
            say(render_text(state, ascii_only=ascii_only))
            choices = state["actions"]
            advice = table.coach_advice()
            if advice is not None:
                say(f"Coach ({advice['agent']}): " + ", ".join(f"{c['label']} {c['p']:.0%}"
                                                          for c in advice["choices"] if c["p"] > 0))
            say("Your action: " + "  ".join(f"{i}) {c['label']}" for i, c in enumerate(choices, 1)))
            while True:
                entry = ask("> ")
                if entry is None or entry.strip().lower() in ("q", "quit"):
                    say("Bye.")
                    return table.hands_played
                action = parse_choice(entry, choices)
                if action is not None:
                    break
                say(f"{entry.strip()!r} is not a legal action here; enter 1-{len(choices)} or a word "
                    f"({', '.join(c['label'] for c in choices)}).")
            frames = table.act(action)
            continue
        say(render_text(state, ascii_only=ascii_only))
        say(render_result(state))
        if phh_dir is not None:
            save_phh(table, phh_dir, say)
        if hands is not None and table.hands_played >= hands:
            return table.hands_played
        while True:
            entry = ask("Enter: next hand, s: save as PHH, q: quit > ")
            if entry is None or entry.strip().lower() in ("q", "quit"):
                say("Bye.")
                return table.hands_played
            if entry.strip().lower() == "s":
                save_phh(table, phh_dir or "runs/play", say)
                continue
            if entry.strip() == "":
                break
            say(f"{entry.strip()!r}: press Enter for the next hand, s to save, q to quit.")
        frames = table.next_hand()


def save_phh(table: Table, folder: str | Path, say: Callable[[str], None]) -> Path | None:
    """Write the last finished hand as a PHH file in ``folder``; None, and a line saying why,
    when the file cannot be written (the game goes on)."""
    record = table.history[-1]
    seed = table.public_seed
    name = f"{seed if seed is not None else secrets.token_hex(4)}-{record.number}"
    fields = {"table_seed": seed} if seed is not None else {}
    text = phh.to_phh(record.game, seat=table.human, hand_id=name, **fields)
    try:
        base = make_folder(folder) / f"{table.rules.name}_{name}"
        path, k = base.with_name(base.name + ".phh"), 2
        while path.exists() and path.read_text() != text:   # the same seed played again: keep both
            path, k = base.with_name(f"{base.name}-{k}.phh"), k + 1
        atomic_write_text(path, text)
    except (ValueError, OSError) as exc:
        say(f"Could not save the hand: {exc}")
        return None
    say(f"Saved {path}")
    return path
