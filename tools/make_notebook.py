"""Write a notebook from a plain-text cell script (used to author notebooks/*.ipynb).

Cells are separated by lines `# %% [markdown]`, `# %% parameters`, `# %%` or
`# %% figure: <name> | <caption>`; the output has no outputs, as committed notebooks must.
"""

import sys
from pathlib import Path

import nbformat


def cells_from_script(text: str):
    cells, kind, meta, lines = [], None, {}, []

    def flush():
        if kind is None:
            return
        source = "\n".join(lines).strip("\n")
        if kind == "markdown":
            source = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in source.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            cells.append(nbformat.v4.new_code_cell(source, metadata=meta))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            header, lines, meta = line[4:].strip(), [], {}
            kind = "markdown" if header == "[markdown]" else "code"
            if header == "parameters":
                meta = {"tags": ["parameters"]}
            elif header.startswith("figure:"):
                name, caption = (p.strip() for p in header[len("figure:"):].split("|", 1))
                meta = {"tags": ["hide-input"], "mystnb": {"figure": {"name": name, "caption": caption}}}
            elif header == "hide":
                meta = {"tags": ["hide-input"]}
        else:
            lines.append(line)
    flush()
    return cells


def main(script: str, out: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python"}}
    nb.cells = cells_from_script(Path(script).read_text())
    nbformat.write(nb, out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
