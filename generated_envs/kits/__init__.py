"""Kits that serve one shipped env each (``kits/<env module>/``), beside the env they serve: what is not a
port of upstream data or a helper several envs share stays out of ``trace_envs.domains``."""
