"""Pick the build that serves a spec: official when present or pullable (for ``auto``), else offline."""

from __future__ import annotations

from dbexp import catalog
from dbexp.catalog import Build, Spec
from dbexp.errors import DbexpError
from dbexp.images import pull


def _vkey(build: Build) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in build.version.split("."))


def offline_versions(flavor: str) -> str:
    found = [b.version for b in catalog.OFFLINE if b.flavor == flavor]
    return f"offline: {flavor} {', '.join(found)}" if found else f"no offline {flavor} builds"


def resolve(spec: Spec) -> Build:
    """The build to use for ``spec``; a one-line error naming every source tried when none can serve it."""
    builds = catalog.lookup(spec)  # unknown flavor/version: its own one-line error
    official = sorted((b for b in builds if b.source == "official"), key=_vkey, reverse=True)
    offline = sorted((b for b in builds if b.source == "offline"), key=_vkey, reverse=True)
    failed: dict[str, list[str]] = {}  # why -> images
    for build in official:
        ok, why = pull.available(build.image)
        if ok:
            return build
        failed.setdefault(why, []).append(build.image)
    tried = [f"official image{'s' if len(refs) > 1 else ''} {', '.join(refs)} could not be pulled"
             f"{pull.origin()} ({why})"
             for why, refs in failed.items()]
    if offline:
        return offline[0]
    why = catalog.NO_OFFLINE.get((spec.flavor, spec.version))
    if spec.source in ("auto", "offline"):
        tried.append(f"no offline build exists for {spec.flavor} {spec.version} "
                     f"({offline_versions(spec.flavor)})" + (f": {why}" if why else ""))
    else:
        alt = [b.spec for b in catalog.candidates(Spec(spec.flavor, spec.version, "offline"))]
        tried.append(f"offline builds exist: use {alt[0]}" if alt
                     else f"no offline build exists either ({offline_versions(spec.flavor)})")
    raise DbexpError(f"{spec}: no source can provide it: {'; '.join(tried)}")
