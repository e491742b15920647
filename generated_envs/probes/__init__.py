"""The offline probes of the shipped capabilities, one module per env module (``precondition.py`` is the probe
of ``generated_envs/precondition.py``), and the helpers they share (:mod:`.kit`).

A probe labels one episode NA (not needed), PRESENT (needed and shown) or LACKING (needed, not shown) from
what the agent did. Each env declares its probe on its capability (``Capability(probe=...)``), so analysis
finds it through :mod:`trace_envs.registry.capabilities`. They are heuristics with known blind spots (see
docs/analysis.md), deliberately specific: a probe fires on the failure pattern of its capability and stays NA
where that pattern cannot occur.
"""
