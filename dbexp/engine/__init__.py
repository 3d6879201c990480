from dbexp.engine.docker_engine import LABEL, client, is_local, start

__all__ = ["LABEL", "client", "is_local", "start"]
