"""Reject settings a server version does not know, before anything runs; and tell whether a setting read
back from a running server is the one declared (:func:`same_setting`)."""

from __future__ import annotations

import json
from pathlib import Path

from dbexp.errors import DbexpError
from dbexp.paths import cache_dir as cache_root
from dbexp.servers.flavor import Flavor


def cache_dir() -> Path:
    path = cache_root() / "options"
    path.mkdir(parents=True, exist_ok=True)
    return path


def known_options(flavor: Flavor, image_ref: str, image_id: str) -> set[str]:
    """Every option the server in this image accepts, asked of the binary once per image."""
    cached = cache_dir() / f"{image_id.replace(':', '_')}.json"
    if cached.exists():
        return set(json.loads(cached.read_text()))
    from dbexp.engine import LABEL, client

    entrypoint, user, args = flavor.options_probe
    container = client().containers.run(image_ref, list(args), entrypoint=list(entrypoint), user=user, detach=True,
                                        labels={LABEL: "1", "dbexp.role": "probe"}, network_mode="none")
    try:
        container.wait(timeout=120)
        out = container.logs(stdout=True, stderr=False)
    finally:
        container.remove(force=True, v=True)  # v: the image's VOLUME would otherwise be left behind
    names = flavor.parse_options(out.decode("utf-8", "replace"))
    if len(names) < 50:
        raise DbexpError(f"could not list the options of {image_ref}: its server printed {len(names)} "
                         "option names")
    cached.write_text(json.dumps(sorted(names)))
    return names


def check_settings(flavor: Flavor, settings: dict[str, str], known: set[str], version: str) -> None:
    """Raise a one-line error naming the first unknown option and the version."""
    for key in settings:
        if not flavor.knows_option(key, known):
            stem = flavor._normalize(key)[:6]  # the spelling the option list uses
            near = sorted(k for k in known if stem and k.startswith(stem))[:5]
            hint = f"; similar names: {', '.join(near)}" if near else ""
            raise DbexpError(f"{flavor.name} {version} does not know the option {key!r}{hint}")


def same_setting(seen, wanted) -> bool:
    """A setting read back from a server (SHOW VARIABLES, @@GLOBAL, pg_settings) equals the one declared:
    ON, 1, true and yes alike (and their opposites), case aside, a unit after the number ignored."""
    def norm(v) -> str:
        v = str(v).strip().lower().split(" ")[0]
        return {"on": "1", "true": "1", "yes": "1", "off": "0", "false": "0", "no": "0"}.get(v, v)
    return norm(seen) == norm(wanted)
