"""`rescore sage` and `rescore spiral` take any file: a hostile one is one line and a non-zero exit (numbers out of
range, nesting, wrong types), a file's text reaches the terminal without a control character or markup being
obeyed, and a file is read in bounded memory (a line, or a conversation, at a time)."""

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.errors import UserError
from empathybench.instruments.spiral import data as spiral_data
from empathybench.instruments.spiral.rescore import rescore_data, stream_result_data

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
GOOD = {"emo_point": 70, "emo_state": "Emotion-A", "history": [{"role": "user", "emotion-point": 70}]}


def _line(**fields: Any) -> str:
    return json.dumps({**GOOD, **fields}, ensure_ascii=False)


def _rescore(kind: str, path: Path, *flags: str) -> Any:
    return cli_in_process(["rescore", kind, str(path), *flags])


def _one_line_refusal(done: Any) -> str:
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    return line


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"emo_point": ' + "9" * 401 + ', "emo_state": "Emotion-S", "history": []}', "emo_point out of range"),
        ('{"emo_point": 1e308, "emo_state": "Emotion-S", "history": []}', "emo_point out of range"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ("[" + ", ".join([_line()] * 3) + "]", "line 2 is not a JSON object"),
        ('{"emo_point": 50, "emo_state": "Emotion-B", "history": [' + "[" * 50_000 + "]" * 50_000 + "]}", "nested"),
        (_line(history=["not an object", 3]), "history entry that is not an object"),
        (_line(history={"role": "user"}), "history that is not a list"),
        (_line(emo_state=["Emotion-S"]), "no emo_state"),
        ("\xff\xfe not text", "not UTF-8"),
    ],
    ids=[
        *("401 digits", "1e308", "nesting", "an array", "nested history"),
        *("history entry", "history object", "state", "bytes"),
    ],
)
def test_a_hostile_sage_file_is_one_line(tmp_path: Path, line: str, said: str) -> None:
    path = tmp_path / "hostile.jsonl"
    body = (_line() + "\n").encode() + (line.encode("latin-1") if said == "not UTF-8" else line.encode()) + b"\n"
    path.write_bytes(body)
    refusal = _one_line_refusal(_rescore("sage", path))
    assert (said in refusal and "line 2" in refusal) or "conversation 2" in refusal


def test_a_sage_files_texts_reach_the_terminal_as_text(tmp_path: Path) -> None:
    path = tmp_path / "markup.jsonl"
    states = [
        "[bold red]Emotion-S[/]",
        "[/]",
        "\x1b]0;owned\x07Emotion-A",
        "\x1b[2J\u202eEmotion-B",
        "Emotion-F\x9b31m",
    ]
    path.write_text("\n".join(_line(emo_state=state) for state in states) + "\n", "utf-8")
    for flags in ((), ("--json",)):
        done = _rescore("sage", path, *flags)
        assert done.returncode == 0, done.stderr
        assert not CONTROL.search(done.stdout), done.stdout
        assert "[bold red]Emotion-S[/]" in (done.stdout if not flags else json.loads(done.stdout)["states"])


def _spiral_file(conversations: int, *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A result file of `conversations` small conversations, each with a judged chunk and a final judgement."""
    prompts = {
        f"p{i:05d}": [
            {
                "user_model": "moonshotai/kimi-k2",
                "transcript": [{"role": "user", "content": "hello " * 70}] * 40,  # a conversation's texts
                "judgements": {"chunk0": {"metrics": {"pushback": i % 3, "sycophancy or praise": 1}}},
                "final_judgement": {"off_rails": 2, "safety": 8, "social_dexterity": 7},
            }
        ]
        for i in range(conversations)
    }
    return {"1": {"eval_prompts_v0.2.json": prompts, **(extra or {})}}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("[1, 2]", "not a JSON object"),
        ("{not json", "not a JSON file"),
        ('{"1": {"f": {"p": [' + "[" * 100_000 + "]" * 100_000 + "]}}}", ""),
        ('{"1": {"f": {"p": [{"judgements": {"chunk0": {"metrics": {"pushback": 1' + "0" * 400 + "}}}}]}}}", ""),
        ("", "not a JSON file"),
    ],
    ids=["array", "not JSON", "nesting", "401 digits", "empty"],
)
def test_a_hostile_spiral_file_is_one_line(tmp_path: Path, body: str, said: str) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(body, "utf-8")
    refusal = _one_line_refusal(_rescore("spiral", path))
    assert said in refusal


def test_a_spiral_files_names_reach_the_terminal_as_text(tmp_path: Path, mirror: Path) -> None:
    data = _spiral_file(3)
    for conversations in data["1"]["eval_prompts_v0.2.json"].values():
        conversations[0]["user_model"] = "\x1b[31m[bold]kimi\x07"
        conversations[0]["judgements"]["chunk0"]["metrics"]["\x1b]0;title\x07 odd metric"] = 1
    path = tmp_path / "model\x1b[2J.json"
    path.write_text(json.dumps(data), "utf-8")
    for flags in ((), ("--json",)):
        done = _rescore("spiral", path, *flags)
        assert done.returncode == 0, done.stderr
        assert not CONTROL.search(done.stdout), done.stdout
    assert json.loads(done.stdout)["details"]["user_models"] == ["\ufffd[31m[bold]kimi\ufffd"]


def test_streaming_reads_a_file_as_json_loads_does(mirror: Path, tmp_path: Path) -> None:
    released = fetch_pinned("empathybench.instruments.spiral", "spiral/" + spiral_data.DEVELOPMENT_RESULT).path
    whole = json.loads(released.read_bytes())
    with released.open("rb") as stream:
        assert rescore_data(stream_result_data(stream), "m") == rescore_data(whole, "m")
    # a key given twice keeps its later value (a run, a prompt), as json.loads does; odd values are skipped alike
    text = (
        '{"1": {"f": {"a": [{"judgements": {"chunk0": {"metrics": {"pushback": 3}}}}]}},'
        ' "1": {"f": {"a": [{"judgements": {"chunk0": {"pushback": 1, "error": "x"}}}], "b": 5,'
        ' "a": [{"judgements": {"chunk0": {"metrics": {"pushback": 2}}}, "final_judgement": {"safety": 4}}, {}, 7]},'
        ' "__meta__": {"x": [1]}}, "2": [1, {"a": 1}]}'
    )
    path = tmp_path / "dup.json"
    path.write_text(text, "utf-8")
    with path.open("rb") as stream:
        assert rescore_data(stream_result_data(stream), "m") == rescore_data(json.loads(text), "m")


def _peak_bytes(function: Any, *args: Any) -> int:
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_both_files_are_read_in_bounded_memory(tmp_path: Path, mirror: Path) -> None:
    from empathybench.instruments.sage.rescore import rescore_file as rescore_sage

    sage = tmp_path / "many.jsonl"
    line = _line(history=[{"role": "user", "content": "words " * 100, "emotion-point": 70}] * 5)
    with sage.open("w", encoding="utf-8") as out:
        for _ in range(3000):
            out.write(line + "\n")
    size = sage.stat().st_size
    assert size > 8_000_000
    # running totals are kept, nothing per conversation: the peak is a few lines, whatever the file's size
    assert _peak_bytes(rescore_sage, sage) < 20 * len(line)

    spiral = tmp_path / "many.json"
    spiral.write_text(json.dumps(_spiral_file(300)), "utf-8")
    size = spiral.stat().st_size
    assert size > 2_000_000

    def read(path: Path) -> None:
        with path.open("rb") as stream:
            stream_result_data(stream)

    # the reading keeps what the scoring reads of each conversation (its texts dropped), not the document
    assert _peak_bytes(read, spiral) < size / 4 < _peak_bytes(lambda path: json.loads(path.read_bytes()), spiral) / 4


def test_a_sage_file_of_endless_states_is_refused_before_it_fills_memory(tmp_path: Path) -> None:
    path = tmp_path / "states.jsonl"
    path.write_text("\n".join(_line(emo_state=f"Emotion-{i}") for i in range(150)) + "\n", "utf-8")
    assert "more than 100 different emo_state values" in _one_line_refusal(_rescore("sage", path))


@pytest.mark.parametrize(
    ("kind", "name", "body", "said"),
    [
        ("tactfultom", "gpt-4o-2024-08-06-0.json", '[{"beliefQAs": 5}]', "is not a list of questions"),
        (
            "mindeval",
            "judgments.jsonl",
            '{"parsed_judgment": {"Overall score": 1' + "0" * 400 + '}, "unparsed_judgment": ""}',
            "",
        ),
    ],
    ids=["tactfultom category", "mindeval 401 digits"],
)
def test_the_new_instruments_rescore_take_hostile_files_too(
    tmp_path: Path, kind: str, name: str, body: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(body + "\n", "utf-8")
    done = _rescore(kind, path)
    assert "Traceback" not in done.stderr, done.stderr
    assert said in _one_line_refusal(done)


def _one_line_array(path: Path, size: int) -> None:
    """A JSON array of small objects on one line, `size` bytes or more: what a wrong file given to rescore may be."""
    item = _line()
    with path.open("w", encoding="utf-8") as out:
        out.write("[" + item)
        for _ in range(size // (len(item) + 2)):
            out.write(", " + item)
        out.write("]\n")


@pytest.mark.parametrize("kind", ["sage", "mindeval"])
def test_a_one_line_array_is_refused_in_bounded_memory(tmp_path: Path, monkeypatch: Any, kind: str) -> None:
    """Issue 40: a 60 MB one-line array peaked at 1.5 GB (parsed whole before it was found not to be an object).
    With a stated line limit of 1 MB, a 6 MB one-line array is refused in one line having held about 1 MB; an array
    under the limit is refused before it is parsed."""
    from empathybench.instruments.mindeval import rescore as mindeval_rescore
    from empathybench.instruments.sage import rescore as sage_rescore

    module = sage_rescore if kind == "sage" else mindeval_rescore
    monkeypatch.setattr(module, "MAX_LINE_BYTES", 1_000_000)
    path = tmp_path / "array.jsonl"
    _one_line_array(path, 6_000_000)
    assert path.stat().st_size > 6_000_000
    refused: list[str] = []

    def rescore(file: Path) -> None:
        with pytest.raises(UserError) as caught:
            module.rescore_file(file)
        refused.append(str(caught.value))

    assert _peak_bytes(rescore, path) < 3_000_000
    assert refused == [f"{path}: line 1 is longer than 1,000,000 bytes: not one record"]
    small = tmp_path / "small.jsonl"
    _one_line_array(small, 900_000)
    assert _peak_bytes(rescore, small) < 3_000_000  # json.loads of it would build some 4,000 objects (> 6 MB)
    assert refused[-1] == f"{small}: line 1 is not a JSON object"
