"""The instruments EmpathyBench can run."""

from empathybench.errors import UserError
from empathybench.instruments.protocol import Benchmark


def all_benchmarks() -> dict[str, Benchmark]:
    from empathybench.instruments.emotionbench.bench import EmotionBench
    from empathybench.instruments.empathetic.bench import EmpatheticResponding
    from empathybench.instruments.eqbench.bench import EQBench
    from empathybench.instruments.giebench.bench import GIEBench
    from empathybench.instruments.seceu.bench import Seceu

    benchmarks: list[Benchmark] = [EQBench(), GIEBench(), Seceu(), EmpatheticResponding(), EmotionBench()]
    return {b.name: b for b in benchmarks}


def resolve_benchmarks(names: list[str] | None) -> list[Benchmark]:
    available = all_benchmarks()
    if not names:
        return list(available.values())
    chosen: list[Benchmark] = []
    for raw in names:
        for name in filter(None, (part.strip() for part in raw.split(","))):
            if name not in available:
                raise UserError(f"unknown benchmark {name!r}; available: {', '.join(available)}")
            if available[name] not in chosen:
                chosen.append(available[name])
    return chosen
