"""Server images: offline ones built from recipes in docker/ with registry binaries, official ones pulled.

  resolve(spec) -> Build        which build serves a spec (official when present or pullable, else offline)
  ensure(build) -> ImageInfo    the build's image, built or pulled when missing (offline: or stale)
  list_rows() -> list[dict]     one status row per catalog build (``dbexp images list``)
  server_home(build) -> Path    an offline MySQL/PostgreSQL build unpacked on the host for bare runs
  ensure_base(suite=...)        a base image dbexp/base:<suite>, bookworm or sid (debootstrap + docker import)
"""

from dbexp.images.base import BASE_REF, base_ref, ensure_base
from dbexp.images.binaries import Fetched, cache_root, fetch, server_home
from dbexp.images.build import ImageInfo, ensure, offline_state, recipe_hash
from dbexp.images.resolve import resolve
from dbexp.images.status import list_rows

__all__ = ["BASE_REF", "Fetched", "base_ref", "ImageInfo", "cache_root", "ensure", "ensure_base", "fetch",
           "list_rows", "offline_state", "recipe_hash", "resolve", "server_home"]
