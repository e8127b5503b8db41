"""SECEU: Situational Evaluation of Complex Emotional Understanding (specs/seceu.md)."""
