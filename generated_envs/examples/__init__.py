"""Worked examples the generation prompt shows but the package does not register.

A target whose shipped envs all lean on helpers outside its kit (a generated module may not import them) would
otherwise show a model no env of its own domain; each module here imports only its target's kit, passes
``trace-envs validate`` as it stands, and is read as text by
:func:`trace_envs.synthesis.generation.prompt.worked_examples` (never imported, never registered, so the
shipped envs, the catalogue and the analysis of planted deficits are unchanged).
"""
