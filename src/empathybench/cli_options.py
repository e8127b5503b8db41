"""The options several `empathybench` commands share, declared once (cli.py defines the commands)."""

from pathlib import Path
from typing import Annotated

import typer

from empathybench.cli_commands import run_dir_option

MODEL_ARG_HELP = (
    "Model argument KEY=VALUE (repeatable): reasoning_effort=low|medium|high, thinking_budget=N, max_tokens=N, "
    "reasoning=true|false, sampling=true|false, token_field=max_tokens|max_completion_tokens, extra_body.KEY=JSON; "
    "where the calls go: base_url=URL, api_key_env=NAME (the variable holding its key)"
)
TIMEOUT_HELP = (
    "Seconds one whole request may take (server wait and every byte of the reply), then it is retried as a "
    "timeout; not applied in process (local, llamacpp/), where max_tokens bounds a call"
)
PRICE_HELP = "input=X,output=Y[,cached=Z] in USD per million tokens"
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display")]
TimeoutOption = Annotated[float, typer.Option("--timeout", min=0.1, max=86400, help=TIMEOUT_HELP)]
SeedOption = Annotated[int, typer.Option(help="Seed for sampling and item selection (0 to 4294967295)")]
AllowUnverifiedOption = Annotated[
    bool, typer.Option(help="Accept data files whose checksum differs from the pin (recorded in run.json)")
]
BenchOption = Annotated[
    list[str] | None, typer.Option("--bench", "-b", help="Benchmark names (repeat or comma-separate); default: all")
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--max-concurrency",
        "-c",
        help="Most calls in flight per model role, 1-256 (default 16 for HTTP, 1 in process): a ceiling; the limit "
        "is halved on 429/503/529 answers and grows back by one at a time",
    ),
]
JudgeOption = Annotated[
    str | None, typer.Option("--judge", help="Model spec of the judge for judged instruments and comparisons")
]
JudgeArgOption = Annotated[
    list[str] | None, typer.Option("--judge-arg", help="Model argument KEY=VALUE for the --judge, as -M")
]
JudgeBaseUrlOption = Annotated[
    str | None,
    typer.Option("--judge-base-url", help="The judge's server (openai/, anthropic/); default: its provider's"),
]
JudgePriceOption = Annotated[str | None, typer.Option("--judge-price", help=f"The judge's price: {PRICE_HELP}")]
SimulatorArgOption = Annotated[
    list[str] | None, typer.Option("--simulator-arg", help="Model argument KEY=VALUE for the --simulator, as -M")
]
SimulatorBaseUrlOption = Annotated[
    str | None, typer.Option("--simulator-base-url", help="The simulator's server, as --judge-base-url")
]
DryRunOption = Annotated[
    bool,
    typer.Option("--dry-run", help="Call no model: print the requests, estimated tokens and cost per role, and exit"),
]
JsonEstimateOption = Annotated[bool, typer.Option("--json", help="With --dry-run: print the estimate as JSON")]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        help="Budget in USD for the calls of this command (a run: over all its sessions): stop before a request "
        "would exceed it (exit 3); the same command with a larger budget continues",
    ),
]
BatchOption = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Send each round of requests as one batch of the provider's batch API (openai/, anthropic/): "
        "half the price, answers within 24 h; a killed command resumes polling the same batch",
    ),
]
BatchPollIntervalOption = Annotated[
    float, typer.Option("--batch-poll-interval", min=0.001, max=3600, help="Seconds between polls of an open batch")
]
BatchFallbackOption = Annotated[
    str,
    typer.Option(
        "--batch-fallback",
        help="live | fail: a request that no batch answered usably (failed, cut off, malformed) after re-asks in 2 "
        "more batches is asked live, or recorded as failed",
    ),
]
MaxReplyBytesOption = Annotated[
    int | None,
    typer.Option(
        "--max-reply-bytes",
        help="Refuse any server reply larger than N bytes, decompressed (default: 32 bytes per token of the "
        "request's budget, at least 1 MB, at most 64 MB; or EMPATHYBENCH_MAX_REPLY_BYTES)",
    ),
]


PresetOption = Annotated[
    str | None,
    typer.Option(
        "--preset", "-p", help="quick | paper | full | demo (default: demo on the embedded model, else quick)"
    ),
]
LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        help="At most N items per benchmark (EmotionBench: N situations and at most N runs per measure); "
        "what an item is: `empathybench list`",
    ),
]
RunDirOption = Annotated[
    Path | None,
    typer.Option(
        "--out", "-o", parser=run_dir_option, help="Run directory; the same command with the same --out resumes"
    ),
]
AtlasFileOption = Annotated[
    Path | None, typer.Option("--atlas", help="An atlas built by `empathybench atlas build` (default: the shipped one)")
]
ValidatedBenchOption = Annotated[
    str | None,
    typer.Option(
        "--bench",
        help="The instrument whose judge to validate (default: the first installed one that offers a validation, "
        "in run order)",
    ),
]
ValidationReportsArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Your own `judge validate --out FILE` reports (or the directory holding them: every report in it) and "
        "`judge compare` results (judge-comparison.json, or its --out directory), each a source of evidence too"
    ),
]
EvidenceJsonOption = Annotated[bool, typer.Option("--json", help="Print every figure and each source's detail as JSON")]
EvidenceHtmlOption = Annotated[
    Path | None,
    typer.Option("--html", help="Also write the evidence as a static page here (DIR/index.html, DIR/evidence.csv)"),
]


# --- the options of one command each, declared here so cli.py holds the commands alone ---------------------------
ModelOption = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="local | openai/<model> | anthropic/<model> | llamacpp/<file.gguf> | scripted/<name>"
    ),
]
BaseUrlOption = Annotated[str | None, typer.Option(help="Server URL for openai/ (else OPENAI_BASE_URL)")]
BenchmarkOptionOption = Annotated[
    list[str] | None,
    typer.Option("--option", "-O", help="Benchmark option BENCH.NAME=VALUE (see `empathybench list`)"),
]
SimulatorOption = Annotated[
    str | None, typer.Option("--simulator", help="Model spec of the simulated person in conversational instruments")
]
RepeatsOption = Annotated[
    int, typer.Option("--repeats", help="Run N times (1-100) with seeds seed..seed+N-1 and report run-to-run variation")
]
ModelArgOption = Annotated[list[str] | None, typer.Option("--model-arg", "-M", help=MODEL_ARG_HELP)]
PriceOption = Annotated[str | None, typer.Option("--price", help=f"The model's price: {PRICE_HELP}")]
SimulatorPriceOption = Annotated[
    str | None, typer.Option("--simulator-price", help=f"The simulator's price: {PRICE_HELP}")
]
ReportOutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Output name: writes NAME.html and NAME.md (and NAME.json for a comparison); a .html, .md or .json "
        "ending is taken as NAME's",
    ),
]
# report, judge validate and judge compare: the judge's server, also spelled --base-url there
JudgeServerOption = Annotated[
    str | None, typer.Option("--judge-base-url", "--base-url", help="The judge's server (else its provider's)")
]
AgainstPublishedOption = Annotated[
    bool,
    typer.Option(
        "--against-published",
        help="Check one run against the published run of the same model (the atlas): both figures, the paired "
        "difference with its interval, a verdict, the settings that differ; with --json as JSON",
    ),
]
ValidationLimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=1,
        help="At most N items to rate (the instrument's validation says which: e.g. spread over its strata)",
    ),
]
ComparisonBenchOption = Annotated[
    str | None,
    typer.Option(
        "--bench",
        help="The instrument whose published judge to compare with (default: the first installed one that offers "
        "a judge comparison, in run order)",
    ),
]
ComparisonLimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit", "-n", min=1, help="Re-judge a part only (the instrument says what N counts; --dry-run prints it)"
    ),
]
ComparisonOutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Directory of the comparison's files: judge-comparison.json and the judgements file that resumes "
        "it (default: judge-compare/<bench>-<judge>)",
    ),
]
ComparisonJsonOption = Annotated[
    bool, typer.Option("--json", help="Print the comparison (or the --dry-run estimate) as JSON instead of tables")
]
AtlasRunsOption = Annotated[
    list[Path] | None, typer.Option("--run", "-r", help="A run directory to place among the published models")
]
AtlasHtmlOption = Annotated[
    Path | None,
    typer.Option("--html", help="Also write the atlas as a static site here (DIR/index.html, DIR/agreement.csv)"),
]
DataBenchOption = Annotated[list[str] | None, typer.Option("--bench", "-b", help="Only these benchmarks' files")]
FamilyOption = Annotated[
    bool, typer.Option("--family", help="Pair models of the same family too, not only the same checkpoint")
]
