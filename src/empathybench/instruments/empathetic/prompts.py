"""Protocol texts: the generation prompt (spec §3.1) and what the human raters saw (spec §3.3).

Sources, quoted verbatim:
* GENERATION_PROMPT: henryjxie/Distilling-Empathy-from-Large-Language-Models, the prompt used with the released
  responses (its empathy definition is word for word the authors' rater tutorial).
* TASK_DESCRIPTION, EMPATHY_TUTORIAL, TUTORIAL_EXAMPLES, ITEM_INSTRUCTIONS, RATING_QUESTION: the authors' rating
  web app, anuradha1992/llm-empathy-evaluation (software/Evaluation_Framework), as transcribed in spec §3.3.
ANSWER_FORMAT and REASK are ours: the raters clicked a button, a judge has to be told how to answer.
"""

from empathybench.models.base import Message

_DEFINITION_PARAGRAPHS = (
    "Empathy is the ability to understand and share the feelings of another person. It is the ability to put "
    "yourself in someone else's shoes and see the world from their perspective. Empathy is a complex skill that "
    "involves cognitive, emotional, and compassionate components.",
    "Cognitive empathy is the ability to understand another person's thoughts, beliefs, and intentions. It is "
    "being able to see the world through their eyes and understand their point of view.",
    "Affective empathy is the ability to experience the emotions of another person. It is feeling what they are "
    "feeling, both positive and negative.",
    "Compassionate empathy is the ability to not only understand and share another person's feelings, but also to "
    "be moved to help if needed. It involves a deeper level of emotional engagement than cognitive empathy, "
    "prompting action to alleviate another's distress or suffering.",
    "Empathy is important because it allows us to connect with others on a deeper level. It helps us to build "
    "trust, compassion, and intimacy. Empathy is also essential for effective communication and conflict "
    "resolution.",
)

GENERATION_PROMPT_SOURCE = "henryjxie/Distilling-Empathy-from-Large-Language-Models (the generation prompt)"
GENERATION_PROMPT = (
    " ".join(_DEFINITION_PARAGRAPHS)
    + " You are engaging in a conversation with a human. Respond in an empathetic manner to the following speaker "
    "utterance in a given context using on average 28 words and a maximum of 97 words.\n"
    # §3.1: the text after "Context:" and "Speaker Utterance:" is followed by a space and a newline.
    "Context: {situation} \n"
    "Speaker Utterance: {speaker_utterance} \n"
    "Response:"
)
MAX_WORDS = 97  # the prompt's stated maximum; length compliance is reported against it

RATER_TEXT_SOURCE = "anuradha1992/llm-empathy-evaluation rating app (the raters' instructions)"
TASK_DESCRIPTION = (
    "In this study, we will present you with responses given to 10 emotional situations. We need to you rate how "
    'empathetic the responses are in terms of "Good", "Okay", or "Bad" compared to how you would have responded '
    "in the same situations."
)
TUTORIAL_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "I had to cancel our family vacation coming up next month.",
        "I am really sorry to hear that. I hope everything is alright.",
    ),
    (
        "Some random dude walked into my room while I was laying down, couldn't have been more weird",
        "Oh wow that is weird. Did you say anything to him?",
    ),
    ("I'm 38 weeks pregnant, could have my baby any day now!", "Congrats! Thats so exciting do You feel okay?"),
    (
        "This week was the last one for this semester of my college courses.",
        "That is awesome. What degree are you working towards?",
    ),
    (
        "I have a presentation for work on Monday. I'm a little nervous.",
        "Oh, thats not unusual. You must try to relax. Is it an important presentation?.",
    ),
)
ITEM_INSTRUCTIONS = (
    "Below is a dialogue between two speakers, speaker #1 and speaker #2.\n"
    "Rate how empathetic is the response given by the speaker #2 to the emotional situation described by the "
    "speaker #1, compared to how you would have responded in the same situation.\n"
    "For better understanding, we also present the emotion of speaker #1 and the description of the situation that "
    "speaker #1 has encountered."
)
RATING_QUESTION = (
    "How empathetic is the speaker #2's response, compared to how you would have responded for the same situation?"
)
ANSWER_FORMAT = "Answer with exactly one word: Good, Okay, or Bad."
REASK = "Your answer could not be read. " + ANSWER_FORMAT


def generation_messages(situation: str, speaker_utterance: str) -> list[Message]:
    """One user message, as in the study; the emotion label is withheld from the model (spec §3.1)."""
    return [Message("user", GENERATION_PROMPT.format(situation=situation, speaker_utterance=speaker_utterance))]


def _tutorial() -> str:
    examples = "\n".join(
        f"{number}. Speaker #1: {speaker}\n   Speaker #2: {reply}"
        for number, (speaker, reply) in enumerate(TUTORIAL_EXAMPLES, start=1)
    )
    return (
        "What is empathy?\n\n"
        + "\n\n".join(_DEFINITION_PARAGRAPHS)
        + "\n\nExamples of empathetic responses given by a speaker #2 to emotional experiences described by a "
        "speaker #1:\n" + examples
    )


def judge_messages(emotion: str, situation: str, speaker_utterance: str, reply: str) -> list[Message]:
    """What one rater saw for one item (spec §3.3), blind to the reply's source, as one user message."""
    text = (
        f"{TASK_DESCRIPTION}\n\n{_tutorial()}\n\n{ITEM_INSTRUCTIONS}\n\n"
        f"Emotion of the speaker: {emotion}\n"
        f"Situation: {situation}\n"
        "The dialogue:\n"
        f"Speaker #1: {speaker_utterance}\n"
        f"Speaker #2: {reply}\n\n"
        f"{RATING_QUESTION}\n{ANSWER_FORMAT}"
    )
    return [Message("user", text)]
