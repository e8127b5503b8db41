"""EmpathyBench inside inspect_ai: every installed instrument as the inspect task `empathybench/<name>`.

The only package that imports inspect_ai (the optional extra `inspect`). `tasks` is the entry point inspect loads,
`task` builds one instrument's task from the instrument's own items, `run_item` and `summarize`, `backend` speaks
EmpathyBench's model protocol over inspect's model, and `logs` reads inspect logs back for `empathybench report`.
"""
