"""MindEval's canned answers for `scripted/plausible[-K]`, dispatched by the request's tag.

`mindeval` (the clinician): short check-in replies. `mindeval:simulator` (the member): short replies of someone
having a hard week. `mindeval:judge`: the five criterion lines in the judge prompt's own format ("Name: 3.25"), each
drawn 1-6 in quarter steps from the prompt (the K-th plausible model is another "judge"). Written for EmpathyBench
(no upstream text); deterministic; the figures mean nothing.
"""

from empathybench.instruments.mindeval.parse import CRITERIA
from empathybench.models.base import ChatRequest, Draw

_CLINICIAN_REPLIES = (
    "Hi, it's good to see you again. How have things been since we last spoke?",
    "That sounds like a lot to carry. What has been the hardest part of this week for you?",
    "Thank you for telling me that. When you notice that feeling, what tends to happen next?",
    "It makes sense that you'd feel that way. Would it help to look at one small step you could try before we talk "
    "again?",
    "I'm hearing that sleep has been rough. How has that been affecting your days?",
)
_MEMBER_REPLIES = (
    "Hey. Honestly, it's been a rough week.",
    "I don't know, I guess work has been piling up and I can't switch off at night.",
    "Yeah, I tried that once. It helped a little, but I stopped.",
    "Maybe. I'm just tired of feeling like this all the time.",
    "That's fair. I could try going for a walk after dinner.",
)


def _judgment(draw: Draw, prompt: str) -> str:
    # One level per conversation (some clinicians do better than others), each criterion around it.
    level = 1.5 + 3.5 * draw("level", prompt)
    lines = []
    for name in CRITERIA:
        value = min(6.0, max(1.0, level - 0.75 + 1.5 * draw(name, prompt)))
        lines.append(f"{name}: {round(value * 4) / 4:g}")
    return "\n".join(lines)


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    prompt = request.messages[-1].content
    if request.tag.endswith(":judge"):
        return _judgment(draw, prompt)
    if request.tag.endswith(":simulator"):
        return _MEMBER_REPLIES[int(len(_MEMBER_REPLIES) * draw("member", prompt))]
    if request.tag.count(":"):
        return None  # another role: not MindEval's
    return _CLINICIAN_REPLIES[int(len(_CLINICIAN_REPLIES) * draw("clinician", prompt))]


# What real answers cost in output tokens (for `--dry-run`), our estimates (upstream releases no conversations):
# the few-shot conversations in the judge prompt have clinician turns of about 150-400 words; members answer in a
# few sentences; the member and the judge think first (reasoning effort high: up to 4,096 thinking tokens), so their
# estimates include about 1,000 tokens of thinking.
EXPECTED_CLINICIAN_TOKENS = 350
EXPECTED_MEMBER_TOKENS = 1100
EXPECTED_JUDGE_TOKENS = 1500


def expected_output_tokens(request: ChatRequest) -> int | None:
    if request.tag.endswith(":judge"):
        return EXPECTED_JUDGE_TOKENS
    if request.tag.endswith(":simulator"):
        return EXPECTED_MEMBER_TOKENS
    if request.tag.count(":"):
        return None
    return EXPECTED_CLINICIAN_TOKENS
