"""Sphinx configuration of the reading copy (``make book``; built by ``book/build.py``, which stages the
notebooks and this file into one source folder). myst-nb reads the notebooks with their committed outputs
and never executes them; everything the pages load (plotly.js, MathJax, the theme) is served from the book
itself, so it builds and reads offline."""

project = "resnetlearn"
author = "resnetlearn contributors"
copyright = "resnetlearn contributors (MIT licence)"
html_title = "resnetlearn: what can ResNet learn efficiently, beyond kernels?"

extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
root_doc = "index"

# notebooks: committed outputs only (the lab's numbers as printed), never executed while building
nb_execution_mode = "off"
# what a page shows of an output: the interactive plotly figure (its text/html, added when staging), then the
# static picture; a widget's view needs a kernel, so its picture (image/png) is shown instead
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.plotly.v1+json", None),
]
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "html_image", "html_admonition"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "myst.xref_missing", "mystnb.unknown_mime_type", "misc.highlighting_failure"]

# MathJax 3 and plotly.js from the book's own _static folder (staged by build.py from pip packages), not a CDN
mathjax_path = "mathjax/tex-chtml.js"
html_static_path = ["_static"]
html_js_files = ["plotly.min.js"]
html_css_files = ["book.css"]

html_theme = "sphinx_book_theme"
html_theme_options = {
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": True,
    "navigation_with_keys": False,
}
html_last_updated_fmt = None
html_show_sourcelink = False
