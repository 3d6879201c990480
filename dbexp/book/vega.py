"""Altair charts that draw in the built book with no internet.

Altair's HTML output (``text/html``, what the book renders) loads vega, vega-lite and
vega-embed from a CDN unless ``VEGA_DEBUG`` says the versions it wants are already
loaded. This module is also a Sphinx extension (``sphinx: extra_extensions:
[dbexp.book.vega]`` in _config.yml) that:

1. builds one script, ``dbexp-vega.js``, from vl-convert-python's bundle of vega,
   vega-lite and vega-embed, wrapped in a function scope (the bundle's top-level
   names such as ``_`` would otherwise clash with Sphinx's globals), which sets
   ``window.vega``, ``window.vegaLite`` and ``window.vegaEmbed``;
2. pre-declares ``VEGA_DEBUG`` with exactly the versions this Altair asks for, so
   each chart's loader skips the CDN and calls the local ``vegaEmbed``;
3. if require.js is on the page (myst-nb adds it for saved ipywidgets state),
   defines the three libraries as named AMD modules, so Altair's require.js path
   does not go to the CDN either;
4. serves the script from the book's ``_static`` and loads it in every page's head.

The script is generated at build time into ``<build dir>/_dbexp_static/`` (cached by
version), so nothing generated is committed. Notebooks need no change; they may
call :func:`enable_offline` to make sure Altair emits the HTML output the book uses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SCRIPT_NAME = "dbexp-vega.js"
STATIC_SUBDIR = "_dbexp_static"


def altair_versions() -> dict[str, str]:
    """The library versions Altair's HTML output asks its loader for."""
    import altair as alt

    return {
        "vega": str(alt.VEGA_VERSION),
        "vega-lite": str(alt.VEGALITE_VERSION),
        "vega-embed": str(alt.VEGAEMBED_VERSION),
    }


def _vl_version_for_bundle(vegalite: str) -> str | None:
    """The vega-lite version vl-convert should bundle: Altair's major.minor if it has it."""
    import vl_convert as vlc

    wanted = ".".join(vegalite.lstrip("v").split(".")[:2])
    available = [v.lstrip("v") for v in vlc.get_vegalite_versions()]
    if wanted in available:
        return wanted
    same_major = [v for v in available if v.split(".")[0] == wanted.split(".")[0]]
    return same_major[-1] if same_major else None  # None: vl-convert's newest


def _cache_key() -> str:
    import vl_convert as vlc

    versions = altair_versions()
    parts = [
        getattr(vlc, "__version__", ""),
        vlc.get_vega_version(),
        vlc.get_vega_embed_version(),
        str(_vl_version_for_bundle(versions["vega-lite"])),
        json.dumps(versions, sort_keys=True),
        _PRELUDE,
        _EPILOGUE,
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# VEGA_DEBUG keys are Altair's `${lib.replace("-", "")}_version`.
_PRELUDE = """\
/* dbexp: vega, vega-lite and vega-embed served with the book, for offline charts. */
(function () {
"""

_EPILOGUE = """
})();
(function () {
  var versions = %(versions)s;
  var debug = (typeof window.VEGA_DEBUG === "object" && window.VEGA_DEBUG) || {};
  Object.keys(versions).forEach(function (lib) {
    debug[lib.replace("-", "") + "_version"] = versions[lib];
  });
  window.VEGA_DEBUG = debug;
  if (typeof window.define === "function" && window.define.amd) {
    window.define("vega", [], function () { return window.vega; });
    window.define("vega-lite", [], function () { return window.vegaLite; });
    window.define("vega-embed", [], function () { return window.vegaEmbed; });
  }
})();
"""


def bundle_js() -> str:
    """The whole ``dbexp-vega.js`` script (about 900 kB)."""
    import vl_convert as vlc

    versions = altair_versions()
    vl_version = _vl_version_for_bundle(versions["vega-lite"])
    bundle = vlc.javascript_bundle(vl_version=vl_version) if vl_version else vlc.javascript_bundle()
    header = (
        f"/* vega {vlc.get_vega_version()}, vega-lite {vl_version or 'latest'}, "
        f"vega-embed {vlc.get_vega_embed_version()} (vl-convert-python bundle); "
        f"declared to Altair as {json.dumps(versions)} */\n"
    )
    return header + _PRELUDE + bundle + _EPILOGUE % {"versions": json.dumps(versions)}


def write_static(directory: Path | str) -> Path:
    """Write ``dbexp-vega.js`` into ``directory`` unless an up-to-date copy is there."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SCRIPT_NAME
    stamp = f"/* dbexp-vega {_cache_key()} */\n"
    if path.is_file():
        with path.open(encoding="utf-8") as existing:
            if existing.readline() == stamp:
                return path
    tmp = path.with_name(f".{SCRIPT_NAME}.tmp")
    tmp.write_text(stamp + bundle_js(), encoding="utf-8")
    tmp.replace(path)
    return path


def enable_offline() -> None:
    """Make Altair emit the HTML output that the book's offline script drives.

    Call once at the top of a chapter notebook (idempotent). It enables Altair's
    ``default`` renderer (``text/html``), undoing any ``mimetype``/``jupyter``/...
    renderer chosen elsewhere, which the book could not draw. The offline libraries
    themselves come from the page (the Sphinx extension below), so charts in
    JupyterLab keep loading their libraries as usual.
    """
    import altair as alt

    if alt.renderers.active != "default":
        alt.renderers.enable("default")


# ---------------------------------------------------------------------------- Sphinx


def serve_static(write):
    """A builder-inited handler: ``write(folder)`` puts a module's files in the book's static folder
    (next to the build output), which Sphinx then serves from _static (HTML builds only)."""
    def handler(app) -> None:
        if getattr(app.builder, "format", None) != "html":
            return
        static = Path(app.outdir).parent / STATIC_SUBDIR
        write(static)
        if str(static) not in [str(p) for p in app.config.html_static_path]:
            app.config.html_static_path.append(str(static))
    return handler


_on_builder_inited = serve_static(write_static)


def setup(app):
    """Sphinx extension entry point (``extra_extensions: [dbexp.book.vega]``)."""
    app.connect("builder-inited", _on_builder_inited)
    # After require.js (priority 500, added by myst-nb on pages with widget state), so
    # the AMD shim sees it; still a plain blocking script in <head>, so it runs
    # before any chart's inline script in the body.
    app.add_js_file(SCRIPT_NAME, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
