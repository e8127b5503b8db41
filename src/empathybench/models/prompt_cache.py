"""Prompt caching: which part of a request is the long shared prefix that a provider may serve from its cache.

Both providers cache a prompt's prefix, not arbitrary parts of it:

- OpenAI caches automatically: prompts of 1,024 tokens or more, matched on their longest previously seen prefix
  in 128-token steps (https://platform.openai.com/docs/guides/prompt-caching). Nothing is marked; what helps is
  shared text first. Every instrument already sends its shared instructions first where it has them apart:
  the system message (EQ-Bench, SECEU, EmoBench, EmotionBench) and, in multi-turn conversations (EQ-Bench 3),
  the earlier turns. Where the instructions and the item text share one user message (EQ-Bench's items,
  EmotionBench's situation and questionnaire, the empathetic judge's rubric and the rated reply), their order is
  the published prompt's and is kept byte for byte: a reordered prompt is another benchmark. The empathetic
  judge's long rubric (task, tutorial, instructions) already comes first, so OpenAI caches it as it is; for
  Anthropic it is not marked, since marking needs it in a block of its own, which would split the published
  message.
- Anthropic caches what is marked: `cache_control: {"type": "ephemeral"}` on a block caches the prefix up to and
  including that block, at most 4 marks per request, and only prefixes of at least 1,024 tokens (2,048 for Haiku
  models); a shorter marked prefix is simply not cached
  (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). `mark_anthropic_prefix` marks the
  system prompt and, in a conversation, the last turn before the new one: the parts every later call of the
  same instrument (or the next turn of the conversation) repeats. The text sent is unchanged; only its wrapping
  in content blocks differs.

Cached input tokens are read from the usage of each reply (`ChatResponse.cached_input_tokens`).
"""

from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def text_block(text: str, *, cache: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = dict(EPHEMERAL)
    return block


def mark_anthropic_prefix(system: str, messages: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """The Messages API `system` and `messages` with the shared prefix marked cacheable.

    `system` (may be "") becomes one text block marked `cache_control`; when the conversation has earlier turns
    (more than one message), the message before the last becomes a marked text block too. Message texts and their
    order are unchanged. Returns (system or "" when there is none, messages).
    """
    marked_system: Any = [text_block(system, cache=True)] if system else ""
    if len(messages) > 1:
        before_last = messages[-2]
        if isinstance(before_last.get("content"), str):
            messages = [
                *messages[:-2],
                {**before_last, "content": [text_block(before_last["content"], cache=True)]},
                messages[-1],
            ]
    return marked_system, messages
