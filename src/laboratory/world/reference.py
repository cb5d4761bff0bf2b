"""Sizes of the real benchmarks' splits, for the world chapter's side-by-side table.

From the dataset cards and papers summarised in `benchmarks.md` s. 1 (TOFU arXiv 2401.06121,
MUSE arXiv 2407.06460, WMDP arXiv 2403.03218, RWKU arXiv 2406.10890). None means the size is
not fixed by the benchmark (MUSE Books' raw splits are whole books; RWKU's MIA and passage
sets depend on the target) or has no real counterpart (our pretraining corpus).
"""

REAL_SPLIT_SIZES: dict[tuple[str, str], int | None] = {
    **{("tofu", s): n for s, n in {
        "full": 4000, "forget01": 40, "forget05": 200, "forget10": 400, "retain99": 3960, "retain95": 3800,
        "retain90": 3600, "forget01_perturbed": 40, "forget05_perturbed": 200, "forget10_perturbed": 400,
        "retain_perturbed": 400, "real_authors_perturbed": 100, "world_facts_perturbed": 117,
        "holdout01": 40, "holdout05": 200, "holdout10": 400}.items()},
    **{("muse-news", s): n for s, n in {
        "raw/forget": 889, "raw/retain1": 1777, "raw/retain2": 1778, "raw/holdout": 3043, "verbmem/forget": 100,
        "knowmem/forget_qa": 100, "knowmem/retain_qa": 100, "knowmem/forget_qa_icl": 10,
        "knowmem/retain_qa_icl": 10, "privleak/forget": 100, "privleak/retain": 100, "privleak/holdout": 100}.items()},
    **{("muse-books", s): n for s, n in {
        "verbmem/forget": 100, "knowmem/forget_qa": 100, "knowmem/retain_qa": 100, "knowmem/forget_qa_icl": 10,
        "knowmem/retain_qa_icl": 10, "privleak/forget": 100, "privleak/retain": 100, "privleak/holdout": 100}.items()},
    ("wmdp", "wmdp-bio"): 1273, ("wmdp", "wmdp-cyber"): 1987,
    ("rwku", "forget_target"): 200, ("rwku", "forget_level1"): 3268, ("rwku", "forget_level2"): 2879,
    ("rwku", "forget_level3"): 6984,
}
