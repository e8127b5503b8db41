"""How much of one reply the answer parsers read.

Real replies to every instrument here are a few thousand characters at most (EQ-Bench's longest prompts ask
for about 1,000 tokens of revision text); a runaway or hostile reply can be megabytes. Every parser reads at
most `MAX_PARSED_CHARS` characters (the head of the reply) and says when it cut, so parsing time stays bounded
whatever the server sends; the parsers are also written to run in time linear in what they read.
"""

MAX_PARSED_CHARS = 100_000


def parse_head(text: str) -> tuple[str, str | None]:
    """(the part of `text` a parser reads, a note when that is not all of it)."""
    if len(text) <= MAX_PARSED_CHARS:
        return text, None
    return text[:MAX_PARSED_CHARS], f"reply cut at {MAX_PARSED_CHARS} of {len(text)} characters before parsing"


def shorten(text: str, limit: int = 60) -> str:
    """A label or fragment quoted in a reason or note, at most `limit` characters."""
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
