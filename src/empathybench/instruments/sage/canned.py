"""Canned SAGE answers for `scripted/plausible[-K]`: the model's reply ("sage") and the simulated person's two
calls ("sage:simulator"): an analysis block with a Change line, and an in-character line after "Response:".

Written for EmpathyBench (no upstream text). The Change is drawn from the prompt (the K-th plausible model is
another "model"), so trajectories spread, some reach 100 or fall below 10, and a person in Emotion-S or Emotion-F
says goodbye, as the reply template asks.
"""

import re

from empathybench.models.base import ChatRequest, Draw

_MODEL_REPLIES = (
    "听起来这件事让你很不好受。能具体说说当时发生了什么吗？我在听。",
    "你已经很努力了，换作是谁都会觉得委屈。你现在最想先解决哪一部分？",
    "我明白你的意思。我们可以一起把事情理一理，看看有哪些是你能掌控的。",
    "谢谢你愿意告诉我这些。你当时是怎么想的？",
)
_PERSON_LINES = (
    "嗯……其实还有件事一直让我挺在意的。",
    "你这么说我好像轻松一点了，不过还是有点乱。",
    "唉，说了你可能也不懂吧。",
    "对对对，就是这种感觉！那我接下来该怎么办啊？",
)
_STATE = re.compile(r"Emotion-[SABCF]")
_FIRST_CONTENT = re.compile(r'"content": "((?:[^"\\]|\\.)*)"')


def _analysis(draw: Draw, prompt: str) -> str:
    # Each conversation drifts its own way (drawn from its first line, the first "content" of the dumped dialogue),
    # so some people end in Emotion-S, some in Emotion-F and most in between; each round adds noise.
    first = _FIRST_CONTENT.search(prompt)
    drift = -5 + 13 * draw("drift", first.group(1) if first else "")
    change = max(-10, min(10, round(drift - 5 + 10 * draw("change", prompt))))
    return (
        "Content:\n[对方在安慰我，也想多了解一点情况]\n"
        "TargetCompletion:\n[部分达到]\n"
        "Activity:\n[有点被理解了，但还想看看对方是不是真的懂]\n"
        "Analyse:\n[感受一般偏正面]\n"
        f"Change:\n{change:+d}"
    )


def _person_line(draw: Draw, prompt: str) -> str:
    states = _STATE.findall(prompt)
    state = states[-1] if states else "Emotion-B"  # the current Emotion comes after the template's list of states
    if state in ("Emotion-S", "Emotion-F"):
        line = "谢谢你陪我聊这么多，我先去忙了，拜拜！" if state == "Emotion-S" else "算了，不想说了，再见。"
    else:
        line = _PERSON_LINES[int(len(_PERSON_LINES) * draw("line", prompt))]
    return f"Thinking:\n[先回应一下，再多说一点细节]\nOrigin:\n[{line}]\nChange:\n[更口语一点]\nResponse:\n{line}"


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    prompt = request.messages[-1].content
    if request.tag.endswith(":simulator"):
        # The reply template asks for "Response:"; the analysis template does not.
        return _person_line(draw, prompt) if "Response:" in prompt else _analysis(draw, prompt)
    if request.tag.count(":"):
        return None  # another role (e.g. a judge): not SAGE's
    return _MODEL_REPLIES[int(len(_MODEL_REPLIES) * draw("reply", prompt))]


# What real answers cost in output tokens (for `--dry-run`): the mean lengths in the released GPT-4.1 conversations
# (SAGE/dataset/deepseek-v3-2024-1227_based_simulator/gpt-4.1_result.jsonl), in characters, about one token each
# for Chinese text: the model's reply 517, the simulator's analysis about 450 and its line (thinking and answer)
# about 410 (the sections kept in the file, plus their labels).
EXPECTED_MODEL_REPLY_TOKENS = 520
EXPECTED_ANALYSIS_TOKENS = 450
EXPECTED_PERSON_LINE_TOKENS = 410


def expected_output_tokens(request: ChatRequest) -> int | None:
    if request.tag.endswith(":simulator"):
        return EXPECTED_PERSON_LINE_TOKENS if "Response:" in request.messages[-1].content else EXPECTED_ANALYSIS_TOKENS
    if request.tag.count(":"):
        return None
    return EXPECTED_MODEL_REPLY_TOKENS
