from dbexp.catalog.catalog import (ALL, FLAVORS, NO_OFFLINE, OFFICIAL, OFFICIAL_ONLY, OFFLINE, PREVIEW, SOURCE_CHOICES,
                                   Artifact, Build, Spec, candidates, lookup, offline_series, parse_spec)

__all__ = ["ALL", "FLAVORS", "NO_OFFLINE", "OFFICIAL", "OFFICIAL_ONLY", "OFFLINE", "PREVIEW", "SOURCE_CHOICES",
           "Artifact", "Build", "Spec", "candidates", "lookup", "offline_series", "parse_spec"]
