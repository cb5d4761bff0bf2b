"""The laboratory world: a fictional world generated from a seed and rendered into the
schemas of the real unlearning benchmarks (TOFU first; MUSE, WMDP and RWKU follow)."""
