from dbexp.engine.docker_engine import LABEL, client, is_local

__all__ = ["LABEL", "client", "is_local"]
