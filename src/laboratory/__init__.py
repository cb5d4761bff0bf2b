"""The laboratory: a CPU world in the real benchmarks' schemas (`laboratory.world`), the tiny models
that learn it and the real checkpoint's fine-tunes (`laboratory.learning`), and the quality gates
they must pass (`laboratory.gates`). It builds on `unlearning` and nothing else of the project."""
