"""Sphinx extension: each script of a page once.

Jupyter Book 1 registers sphinx-thebe's and sphinx-togglebutton's inline scripts again whenever
Sphinx re-reads the sources in one build, and an inline `const THEBE_JS_URL` declared twice is a
console error on every page (caught by tests/browser). This drops the repeats before the page is
written.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    scripts, seen = context.get("script_files"), set()
    if not scripts:
        return
    unique = []
    for script in scripts:
        # the same file or inline body, whatever its priority (an inline script's filename is None
        # or "" depending on how it was registered)
        key = (str(getattr(script, "filename", script) or ""), repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app):
    # early: html-page-context stops at the first handler that returns a template name
    app.connect("html-page-context", _dedupe, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
