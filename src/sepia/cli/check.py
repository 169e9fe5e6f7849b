"""`sepia check`: is another engine's answer correct? (RSP-QL Definitions 25-26, Theorem 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sepia.cli.app import app, fail
from sepia.cli.options import (
    DataOption,
    DeadLetterOption,
    EntailmentOption,
    EventPolicyOption,
    LatenessOption,
    MaxElementSizeOption,
    OnErrorChoice,
    OnErrorOption,
    StreamOption,
    UntilOption,
    load_inputs,
    warn_static,
)
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.rdf.results import read_results_jsonl
from sepia.runtime.inputs import ReadOptions


@app.command(short_help="Judge an answer file against a query (RSP-QL oracle).")
def check(
    query: Annotated[Path, typer.Argument(help="The query file (.rq).", exists=True)],
    answer: Annotated[
        Path, typer.Option(help="The answer to judge: jsonl as io.md specifies.", exists=True)
    ],
    stream: StreamOption = [],  # noqa: B006  (typer reads the default, never mutates it)
    data: DataOption = [],  # noqa: B006
    on_error: OnErrorOption = OnErrorChoice.stop,
    dead_letter: DeadLetterOption = None,
    allowed_lateness: LatenessOption = 0,
    max_element_size: MaxElementSizeOption = MAX_ELEMENT_SIZE,
    until: UntilOption = None,
    event_policy: EventPolicyOption = None,
    entailment: EntailmentOption = None,
) -> None:
    """Decide whether ANSWER is a correct answer of QUERY over the given input.

    Every window start t0 the RSP-QL paper allows is tried (Theorem 1 bounds them), results
    before the start-up transient are ignored, and the report names the t0 that matched or
    the first difference. Exits 0 when correct, 1 when not.
    """
    warn_static([query], stream, data)
    inputs = load_inputs(
        [query],
        stream,
        data,
        ReadOptions(on_error.value, dead_letter, allowed_lateness, max_element_size),
        event_policy,
    )
    try:
        results = [r for r in read_results_jsonl(answer) if r.query == inputs.queries[0].name]
    except ValueError as error:
        fail(f"{answer}: {error}")
    from sepia.semantics.oracle import check as check_answer  # loaded for this command only

    verdict = check_answer(
        inputs.queries[0].query, inputs.streams, inputs.background, results, until=until
    )
    Console().print(verdict.describe(), highlight=False)
    raise typer.Exit(0 if verdict.correct else 1)
