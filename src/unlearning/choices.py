"""The names a command line, a chapter or a run specification chooses from, as plain values.

They are kept apart from the modules that implement them (`synthesis`, `engine`, `runtime`) so
that building the command line, `unlearning --help` included, imports neither torch nor
transformers; those modules import their names from here, so each list is written once.
"""

# update rules of `synthesis.combine` (SAGO paper, sections 3-4)
RULES = ("sum", "pcgrad", "pcgrad_global", "sago", "sago_additive")
# probe sets of MASC's violation rule (`stopping.split_probe_set`)
PROBE_SETS = ("official", "holdout")
# where and in which precision models run (`runtime.Runtime`)
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "bfloat16")
# which jobs one `laboratory learn` trains (`learning.learn`): the laboratory's models, the real
# checkpoint's fine-tunes, or both
LEARN_PARTS = ("all", "lab", "real")
