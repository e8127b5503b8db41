"""GIEBench: group identity-based empathy, three prompt conditions (specs/giebench.md)."""
