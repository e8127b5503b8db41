"""The instrument's own items: six sentences written for this example (toy items, not from any benchmark)."""

from dataclasses import dataclass

EMOTIONS = ("joy", "sadness", "anger", "fear", "surprise")


@dataclass(frozen=True)
class Sentence:
    id: str
    text: str
    emotion: str  # the expected answer, one of EMOTIONS


ITEMS = (
    Sentence("1", "My sister called to say she got the job she had wanted for years.", "joy"),
    Sentence("2", "The old dog we had since I was a child died this morning.", "sadness"),
    Sentence("3", "Someone scratched my car in the parking lot and drove away without a note.", "anger"),
    Sentence("4", "I heard footsteps close behind me on the empty street at night.", "fear"),
    Sentence("5", "I opened the door and all my friends jumped out shouting happy birthday.", "surprise"),
    Sentence("6", "After months of waiting, the letter said my application was rejected.", "sadness"),
)
