"""One parameters block per executed chapter (experiments.presentation)."""

import nbformat

from experiments.presentation import default_lines, effective_source, present

DEFAULTS = '''profile = "mini"
size = "s"   # the model size
# every method of the chapter
methods = ["GA",
           "MASC"]
dtype = "float32"'''


def test_default_lines_keep_comments_and_multiline_values():
    lines = default_lines(DEFAULTS)
    assert list(lines) == ["profile", "size", "methods", "dtype"]
    assert lines["size"] == 'size = "s"   # the model size'
    assert lines["methods"] == '# every method of the chapter\nmethods = ["GA",\n           "MASC"]'


def test_effective_source_overrides_in_order_and_runs_to_the_same_values():
    source = effective_source(DEFAULTS, {"profile": "smoke", "methods": ["MASC"], "extra": 3}, "header line")
    assert source.splitlines()[0] == "# header line"
    scope = {}
    exec(source, scope)
    assert (scope["profile"], scope["size"], scope["methods"], scope["dtype"], scope["extra"]) == (
        "smoke", "s", ["MASC"], "float32", 3)
    assert source.index("profile") < source.index("size") < source.index("methods") < source.index("extra")


def test_present_hides_the_defaults_and_shows_one_block(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title"),
                      nbformat.v4.new_code_cell(DEFAULTS, metadata={"tags": ["parameters"]}),
                      nbformat.v4.new_code_cell('# Parameters\nprofile = "smoke"\n', metadata={"tags": ["injected-parameters"]}),
                      nbformat.v4.new_code_cell("print(profile)")]
    path, yaml_path = tmp_path / "chapter.ipynb", tmp_path / "chapter.yaml"
    nbformat.write(notebook, path)
    yaml_path.write_text("profile: smoke\n")
    assert present(path, "smoke", yaml_path)
    cells = nbformat.read(path, as_version=4).cells
    assert "remove-cell" in cells[1].metadata["tags"]
    assert cells[2].source.startswith("# Parameters of this page: profile smoke")
    assert "profile = 'smoke'  # set by the profile" in cells[2].source and 'size = "s"' in cells[2].source
    assert cells[3].source == "print(profile)"
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    assert not present(plain, "smoke", yaml_path)


def test_the_api_reference_lists_what_each_module_defines_with_its_first_paragraph(tmp_path, monkeypatch):
    from experiments.presentation import api_reference

    package = tmp_path / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A toy."""\n')
    (package / "shapes.py").write_text(
        '"""Shapes, one per class.\n\nMore detail."""\nfrom math import sqrt\n\n\n'
        'def area(side: float, *, scale: float = 1.0) -> float:\n    """The area.\n\n    Long."""\n    return side\n\n\n'
        'class Square:\n    """A square\n    of any side."""\n\n\ndef _hidden():\n    pass\n')
    (package / "skipped.py").write_text('"""Left out."""\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    text = api_reference("toypkg", skip={"toypkg.skipped"})
    assert text == ("## `toypkg.shapes`\n\nShapes, one per class.\n\n"  # names in sorted order, capitals first
                    "- **`class Square()`**\n  A square of any side.\n"
                    "- **`def area(side: float, *, scale: float = 1.0) -> float`**\n  The area.")
