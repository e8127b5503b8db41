"""An example third-party EmpathyBench instrument: name the emotion of a short invented sentence.

The entry point `example = "empathybench_example:instrument"` (pyproject.toml) reads `instrument` from here.
"""

from empathybench_example.instrument import Example

instrument = Example()
