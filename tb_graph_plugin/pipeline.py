"""A stage's pipeline as one visible list of named steps (dagre's ``runLayout``, ELK's phases).

Each stage (graph building, hierarchy, scene composition, the fast layout) declares its order
once as a :class:`Pipeline` of :class:`Step`\\ s over a state object; a conditional step says when
it runs (``when``) instead of hiding a branch in code. :meth:`Pipeline.run` times every step
into one :class:`Timings` (logged at debug level once the run ends), reports each step to an
optional progress callback (a ``/job`` stage), and stops after a named step for tests.

Imports nothing of the package: every stage may use it.

Example::

    >>> p = Pipeline("demo", [Step("double", lambda s: s.append(s[-1] * 2)),
    ...                       Step("odd", lambda s: s.append(1), when=lambda s: s[-1] % 2 == 1)])
    >>> p.run([3]), p.run([3], stop_after="double"), p.run([3, 7], start_after="double")
    ([3, 6], [3, 6], [3, 7, 1])
    >>> p.names
    ['double', 'odd']
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Callable, Generic, Optional, Sequence, TypeVar

__all__ = ["Step", "Pipeline", "Timings", "Progress"]

logger = logging.getLogger(__name__)

S = TypeVar("S")
Progress = Callable[[str, float], None]  # (step name, fraction of the stage done before it)


class Timings(dict):
    """Seconds per step name (a step run twice adds up), in the order the steps first ran."""

    def add(self, name: str, seconds: float) -> None:
        self[name] = self.get(name, 0.0) + seconds

    def __str__(self) -> str:
        return " ".join(f"{k}={v * 1000:.1f}ms" for k, v in self.items())


@dataclasses.dataclass(frozen=True)
class Step(Generic[S]):
    """One named step: ``run(state)``; skipped when ``when(state)`` is false."""

    name: str
    run: Callable[[S], Any]
    when: Optional[Callable[[S], bool]] = None


class Pipeline(Generic[S]):
    """An ordered list of uniquely named steps over a state of type ``S``."""

    def __init__(self, name: str, steps: Sequence[Step[S]]):
        names = [s.name for s in steps]
        if len(set(names)) != len(names):
            raise ValueError(f"pipeline {name!r}: step names must be unique, got {names}")
        self.name = name
        self.steps = tuple(steps)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    def run(self, state: S, *, timings: Optional[Timings] = None, progress: Optional[Progress] = None,
            span: tuple[float, float] = (0.0, 1.0), stop_after: Optional[str] = None,
            start_after: Optional[str] = None) -> S:
        """Run the steps in order on ``state`` and return it.

        Pre: ``stop_after`` and ``start_after`` are None or step names (``start_after``: the
        state is what the steps up to that one made; they are not run again). Post: each step
        after ``start_after`` whose ``when`` held ran once,
        its seconds added to ``timings[name]``; skipped steps are not in ``timings``; before each
        run step, ``progress(name, f)`` with ``f`` going from ``span[0]`` towards ``span[1]`` by step
        index; nothing after ``stop_after`` ran.
        """
        for name in (stop_after, start_after):
            if name is not None and name not in self.names:
                raise ValueError(f"pipeline {self.name!r} has no step {name!r} (steps: {self.names})")
        first = 0 if start_after is None else self.names.index(start_after) + 1
        timings = Timings() if timings is None else timings
        lo, hi = span
        n = len(self.steps)
        for i, step in enumerate(self.steps[first:], first):
            if step.when is None or step.when(state):
                if progress is not None:
                    progress(step.name, lo + (hi - lo) * i / n)
                t = time.perf_counter()
                step.run(state)
                timings.add(step.name, time.perf_counter() - t)
            if step.name == stop_after:
                break
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s: %s", self.name, timings if isinstance(timings, Timings) else Timings(timings))
        return state
