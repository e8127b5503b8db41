"""EmpathyBench: published empathy and emotional-intelligence instruments for any LLM, beside human norms."""

__version__ = "0.1.0"
