"""One row per catalog build for ``dbexp images list``: what exists here, what could be made."""

from __future__ import annotations

from dbexp import catalog
from dbexp.catalog import Build
from dbexp.images import pull
from dbexp.images.build import offline_state
from dbexp.images.resolve import offline_versions


def _offline_for(build: Build) -> list[str]:
    return [b.version for b in catalog.OFFLINE if b.flavor == build.flavor and b.major == build.major]


def _official_row(build: Build, registry: tuple[bool, str] | None) -> tuple[str, str, dict | None]:
    attrs = pull.local_attrs(build.image)
    if attrs is not None:
        return "present", "", attrs
    assert registry is not None
    reachable, why = registry
    if reachable:
        return "pullable", pull.origin().strip(), None  # "from mirror M (...)" where one is set
    why += pull.origin()
    serves = _offline_for(build)
    if serves:
        return "not pullable here", f"offline {build.flavor} {', '.join(serves)} serves it ({why})", None
    reason = catalog.NO_OFFLINE.get((build.flavor, build.major))
    return ("official-only, not pullable here",
            f"{why}; {offline_versions(build.flavor)}" + (f"; {reason}" if reason else ""), None)


def list_rows() -> list[dict]:
    """flavor, version, source, image, status, detail, size_mb: one dict per catalog build.

    Offline status: present | stale (built, recipe or binaries changed since) | buildable.
    Official status: present | pullable | not pullable here | official-only, not pullable here.
    One registry probe (of the mirror, where DBEXP_REGISTRY_MIRROR names one) decides pullability
    for every official build.
    """
    registry: tuple[bool, str] | None = None
    rows = []
    for build in catalog.ALL:
        if build.source == "offline":
            status, attrs = offline_state(build)
            art = build.artifact
            detail = f"from {art} on dbexp/base:{build.base}" if art and status == "buildable" else ""
        else:
            if registry is None and pull.local_attrs(build.image) is None:
                registry = pull.probe(build.image)
                if not registry[0] and registry[1] != pull.NO_REGISTRY:
                    registry = (True, "")  # the registry answered; this one tag is missing there
            status, detail, attrs = _official_row(build, registry)
        rows.append({"flavor": build.flavor, "version": build.version, "source": build.source,
                     "image": build.image, "status": status, "detail": detail,
                     "size_mb": round(attrs["Size"] / 1e6) if attrs else None})
    return rows
