"""The one-line verdict of a run: what happened and, when something went wrong, what to do.

Built from ``Metrics`` alone, clause by clause (joined with "; "):

1. the controller's id convention when it is not the plain one: "replies carry the previous
   message's id (…)", "the controller numbers its replies with its own counter (…)";
2. where replies land and how fast the simulation ran — or, below 0.85× real time, why:
   stale or duplicate replies dropped in blocking receives (checked first: the simulator
   waited for a newer id, so the controller's speed is not the question), a controller shown
   slower than T_ext (even its fastest reply: suggest an ``--ext-time``), waits on the wire
   or the machine (the controller answered fast at times: no ``--ext-time`` would help), or
   a simulator that cannot keep up. Advice is given only for a cause the logs show;
3. timeouts, those after stale or duplicate replies named as such, with the remedy for the
   controller's id convention (never "raise --ext-time": a faster controller sending the
   same ids would not have helped);
4. gaps, lost messages, applied duplicate or stale replies, replies to ids never sent, and
   replies the simulator dropped.
"""

from __future__ import annotations

from vcosim.analysis.replies import OTHER, OWN_COUNTER, PREVIOUS_ID
from vcosim.analysis.results import SLOW_SHARE, Metrics

HELD = 0.85  # a real-time factor above this is "real time held" (the cases' threshold)
FASTER = 1.1  # above this, "faster than real time"
LITTLE_MARGIN = 0.8  # a controller whose fastest reply takes this share of T_ext

PATTERN_TEXT = {
    PREVIOUS_ID: "replies carry the previous message's id (a Memory block on the id, as in "
    "BeamNG's example models)",
    OWN_COUNTER: "the controller numbers its replies with its own counter (as BeamNG's FMUs "
    "do): replies are applied by id order",
}
REMEDY = {
    PREVIOUS_ID: "run with --window 2, or feed the received id straight to the reply",
    OWN_COUNTER: "make the controller send one reply per message",
}
DEFAULT_REMEDY = "make the controller answer only the newest message, with that message's id"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:g} ms"


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _kind(stale: int, duplicate: int) -> str:
    """The kinds that occurred: stale, duplicate, or stale or duplicate."""
    if stale and duplicate:
        return "stale or duplicate"
    return "stale" if stale else "duplicate"


def _rtf_between_timeouts(m: Metrics) -> float:
    """The whole run's real-time factor with timeouts and the start-up's waits left out.

    For runs without a "while connected" factor (replies in one step only): their overall
    factor counts seconds of waiting and would blame the controller's speed for them.
    """
    waits = [*m.timeouts, *m.startup_waits]
    intervals = m.steps - 1 - len(waits)
    wall = m.duration - sum(t.length for t in waits)
    if intervals <= 0 or wall <= 0:
        return m.rtf or 0.0
    return intervals * m.dt / wall


def _pattern_clause(m: Metrics, troubled: bool) -> str | None:
    """The id convention, unless plain; ``troubled``: dropped replies cost waiting."""
    if m.id_pattern == PREVIOUS_ID:
        text = PATTERN_TEXT[PREVIOUS_ID]
        if m.startup_leading:
            text += (
                f": the first {m.startup_leading} replies carried id 0 and were not applied"
                if m.startup_leading > 1
                else ": the first reply carried id 0 and was not applied"
            )
        return text
    if m.id_pattern == OWN_COUNTER:
        return PATTERN_TEXT[OWN_COUNTER] + ("" if troubled else ", nothing to change")
    if m.id_pattern == OTHER and m.id_offset is not None:
        return (
            f"replies carry ids {m.id_offset} above the last message sent (neither its id "
            "nor a counter one ahead)"
        )
    return None


def _no_reply_applied(m: Metrics) -> str:
    if m.startup_unapplied:
        text = (
            "no reply was applied: the controller answered "
            f"{_count(m.startup_unapplied, 'time')}, always with id 0 or below (a reply "
            "applies only with an id above 0 and above the largest applied)"
        )
        if m.timeouts:
            text += f"; {_count(len(m.timeouts), 'timeout')}"
        return f"{text} — feed the received id straight to the reply"
    waited = sum(t.length for t in m.startup_waits)
    if not waited:
        return f"no controller answered: only sends ({m.sends})"
    return f"no controller answered: only sends ({m.sends}), {waited:.1f} s waiting for one"


def _timing_clause(m: Metrics) -> tuple[str, bool]:
    """Where replies land and the real-time factor; True if it blamed dropped replies."""
    skips = max(m.skips if m.skips is not None else 0, 0)  # −1: several sends in a step
    period = (skips + 1) * m.dt
    rtf = m.rtf_connected if m.rtf_connected is not None else _rtf_between_timeouts(m)
    landing = m.latency_steps.median
    need = (m.fastest_reply or 0.0) / period  # what the controller is shown to need at least
    if rtf <= HELD:
        if m.dropped_in_blocking:  # they waited for a newer id: speed is not the question
            kind = _kind(m.dropped_stale or 0, m.dropped_duplicate or 0)
            n = m.dropped_in_blocking
            return (
                f"simulation at {rtf:.2f}× real time; blocking receives dropped {n} {kind} "
                f"{'reply' if n == 1 else 'replies'} (ids already applied)"
            ), True
        if m.controller_slow:
            text = (
                f"controller slower than T_ext: simulation at {rtf:.2f}× real time, no reply "
                f"in under {_ms(m.fastest_reply or 0.0)} — "
            )
            ext = m.suggested_ext_time
            if ext is not None and ext > period + 1e-12:
                text += (
                    f"raise --ext-time to {_ms(ext)} (--ext-time {ext:g}) or speed up "
                    "the controller"
                )
            else:
                text += "speed up the controller"
            return text, False
        if m.waiting_share >= SLOW_SHARE:
            return (
                f"simulation at {rtf:.2f}× real time, waiting for replies "
                f"{m.waiting_share * 100:.0f} % of the time, but the controller answered in "
                f"as little as {_ms(m.fastest_reply or 0.0)}: the waits are the wire's or the "
                "machine's (other processes), not its computation's"
            ), False
        return (
            f"simulation at {rtf:.2f}× real time although the controller answers in time "
            f"(waiting {m.waiting_share * 100:.0f} % of the time): the simulator cannot "
            "keep up on this machine"
        ), False
    if landing is None:
        where = f"{_count(m.unmatched, 'reply', 'replies')} to ids that were never sent"
    elif landing <= 1:
        where = "controller answers within 1 step"
    elif landing < skips + 1:
        in_blocking = m.replies_in_blocking / max(m.applied, 1)
        kind = "non-blocking steps" if in_blocking < 0.5 else "blocking receives"
        where = f"replies land {landing:g} steps after the send, in {kind}"
    elif landing == skips + 1:
        where = "replies land in the next send step's blocking receive"
    else:
        where = (
            f"replies land {landing:g} steps after the send ({landing / (skips + 1):.1f}"
            f" send periods, window {m.window})"
        )
    speed = (
        f"faster than real time ({rtf:.2f}×)" if rtf > FASTER else f"real time held ({rtf:.2f}×)"
    )
    text = f"{where}; {speed}"
    if landing is not None and landing == skips + 1 and skips > 0 and need >= LITTLE_MARGIN:
        text += f", little margin: even its fastest reply took {need * 100:.0f} % of T_ext"
    return text, False


def _timeout_clauses(m: Metrics) -> tuple[list[str], bool]:
    """Timeouts after dropped replies, then the others; True if the first were named."""
    parts: list[str] = []
    longest = max((t.length for t in m.timeouts), default=None)
    after = m.timeouts_after_dropped or 0
    if after:
        kind = _kind(m.timeouts_after_stale or 0, after - (m.timeouts_after_stale or 0))
        wait = (
            f" (the simulator waited {longest:.1f} s for an id newer than those applied)"
            if longest is not None
            else ""
        )
        parts.append(f"{_count(after, 'timeout')} after {kind} replies{wait}")
    # The simulator's own count when it logged one: a stall longer than a timeout also
    # shows as a gap in the steps while the next blocking receive waits.
    total = m.timeouts_logged if m.timeouts_logged is not None else len(m.timeouts)
    plain = max(total - after, 0)
    if plain and longest is not None:
        parts.append(
            f"{_count(plain, 'timeout')} (up to {longest:.1f} s each: the simulator "
            "waited for a reply that never came)"
        )
    return parts, bool(after)


def _dropped_clause(m: Metrics) -> str | None:
    stale, duplicate = m.dropped_stale or 0, m.dropped_duplicate or 0
    if not stale and not duplicate:
        return None
    kinds = [
        _count(n, f"{word} reply", f"{word} replies")
        for n, word in ((stale, "stale"), (duplicate, "duplicate"))
        if n
    ]
    where = (
        f"{m.dropped_in_blocking} in blocking receives"
        if m.dropped_in_blocking
        else "in non-blocking receives"
    )
    return f"{' and '.join(kinds)} dropped ({where})"


def verdict(m: Metrics) -> str:
    """One plain-language sentence about the run, from its metrics (see the module doc).

    The first clause says where replies land (median latency in steps against the observed
    skips) or, if the simulation ran slower than real time (factor ≤ 0.85 while connected),
    what is to blame. Stale or duplicate replies dropped in blocking receives are named as
    the cause of waiting before a slow controller is considered.
    """
    if m.sends == 0:
        return (
            f"no message was sent in {m.steps} physics steps: the coupling was off or "
            "never due to send"
        )
    if m.applied == 0:
        return _no_reply_applied(m)
    parts: list[str] = []
    timing, named = _timing_clause(m)
    timeouts, named_in_timeouts = _timeout_clauses(m)
    pattern = _pattern_clause(m, named or named_in_timeouts)
    if pattern:
        parts.append(pattern)
    remedy = f" — {REMEDY.get(m.id_pattern or '', DEFAULT_REMEDY)}"
    if named_in_timeouts:
        timeouts[0] += remedy
    elif named:
        timing += remedy
    parts.append(timing)
    parts.extend(timeouts)
    if m.gaps:
        longest_gap = max(g.length for g in m.gaps)
        parts.append(
            f"{_count(len(m.gaps), 'gap')} where the controller did not answer "
            f"(longest {_ms(longest_gap)} of simulated time)"
        )
    for items, one, many in (
        (m.lost, "lost message", "lost messages"),
        (m.duplicates, "duplicate reply", "duplicate replies"),
        (m.stale, "stale reply", "stale replies"),
    ):
        if items:
            ids = ", ".join(str(e.id) for e in items[:5]) + (", …" if len(items) > 5 else "")
            parts.append(f"{_count(len(items), one, many)} (id {ids})")
    if m.unmatched:
        parts.append(f"{_count(m.unmatched, 'reply', 'replies')} to an id never sent")
    dropped = None if named or named_in_timeouts else _dropped_clause(m)
    if dropped:
        parts.append(dropped)
    return "; ".join(parts)
