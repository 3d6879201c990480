"""What a run records of its server's image: the digest, and for an offline build its artifact and
that artifact's SHA256 (a pinned Debian package with its version), read from the image's labels."""

from dbexp.images.build import ARTIFACT_LABEL, ARTIFACT_NAME_LABEL, _info
from dbexp.images.base import HASH_LABEL
from dbexp.results.provenance import image_provenance

SHA = "628d2d7d2dc827507bcae80677a9950766b002bec2c658cb96343d9f324f8660"


def _attrs(labels: dict, digests: list[str]) -> dict:
    return {"Id": "sha256:abc", "Size": 1, "RepoDigests": digests, "Config": {"Labels": labels}}


def test_an_offline_image_records_its_pinned_package_and_sha256():
    labels = {HASH_LABEL: "h", ARTIFACT_NAME_LABEL: "debian:mysql-server-core=9.7.4-2", ARTIFACT_LABEL: SHA}
    got = image_provenance(_info("dbexp/mysql:9.7.4", _attrs(labels, []), "offline"))
    assert got == {"image": "dbexp/mysql:9.7.4", "image_id": "sha256:abc", "image_digest": "sha256:abc",
                   "artifact": "debian:mysql-server-core=9.7.4-2", "artifact_sha256": SHA}


def test_an_official_image_records_its_registry_digest_only():
    got = image_provenance(_info("mysql:9.7", _attrs({ARTIFACT_LABEL: "x"}, ["mysql@sha256:def"]), "official"))
    assert got["image_digest"] == "mysql@sha256:def" and got["artifact"] == got["artifact_sha256"] == ""
