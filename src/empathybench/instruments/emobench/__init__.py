"""EmoBench (Sabour et al., ACL 2024; MIT): emotional understanding (EU) and application (EA), en + zh.

One self-contained folder: pins, data, prompts of both protocols, parsers, scoring, rescoring of the released runs
and the item runner. Spec: shared/specs/emobench.md.
"""
